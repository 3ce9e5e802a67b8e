import Foundation

/// Where a download stands in its life cycle.
///
/// ```
/// queued ──▶ running ──▶ completed
///   ▲  ▲        │  │
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
}
