import Foundation

/// Where a download stands in its life cycle.
///
/// ```
/// queued ──▶ running ──▶ completed
///   ▲  ▲        │  │  └──▶ interrupted (its foreground command ended first)
///   │  └─paused◀┘  └──▶ failed
///   └───────────────────┘ (resume)
/// ```
/// See `docs/state-machine.md` for every transition.
public enum DownloadState: String, Sendable, Codable, CaseIterable, Hashable {
    /// Waiting for a free slot.
    case queued
    /// Transferring, or waiting between retries.
    case running
    /// Stopped by the user; keeps its partial data and resumes where it stopped.
    case paused
    /// The whole file is at its destination.
    case completed
    /// Stopped by an error that retrying did not fix; `resume` tries again from what is on disk.
    case failed
    /// Added by a foreground command (`haul get`, a manager with ``DownloadManager/Configuration/ownsItsDownloads``)
    /// that ended before it finished: nothing runs it until that command runs again or it is resumed; it keeps its
    /// partial data.
    case interrupted
}

/// A state change as reported in ``DownloadEvent``: the state, with what the new state produced.
public enum DownloadStatus: Sendable, Equatable {
    case queued
    case running
    case paused
    /// The file is complete at `file`.
    case completed(file: URL)
    /// The download stopped with `error`.
    case failed(DownloadError)
    /// The download was forgotten (`remove` or `cancel`).
    case removed
    /// Its foreground command ended before it finished (``DownloadState/interrupted``).
    case interrupted
}
