import Foundation

/// Everything known about one download at one moment.
public struct DownloadSnapshot: Sendable, Identifiable, Hashable {
    public var id: DownloadID
    /// The URL as added.
    public var url: URL
    /// The URL the last response came from, after redirects.
    public var finalURL: URL?
    public var state: DownloadState
    /// Bytes received, speed, size.
    public var progress: DownloadProgress
    /// The destination file: final once completed, the planned path before (nil until the name is known).
    public var file: URL?
    /// Why the download failed, or the last transient error while it retries.
    public var lastError: DownloadError?
    public var options: DownloadOptions
    public var createdAt: Date
    public var startedAt: Date?
    public var completedAt: Date?
    /// When anything about it last changed (its state, its options, its progress as checkpointed).
    public var updatedAt: Date = .distantPast
    /// The foreground command that owns the download (`haul get (pid 4711)`), whose end leaves it
    /// ``DownloadState/interrupted``; nil for the queue's downloads.
    public var owner: String?
    /// The SHA-256 of the completed file as Haul wrote it (lowercase hexadecimal); nil before it completed.
    public var sha256: String?
    /// For a completed download: how its file on disk differs from the one Haul put there ("is gone", "is 1048576
    /// bytes now, was 10485760"): its size, modification time and identity are compared, not its bytes
    /// (``DownloadManager/verify(_:)`` reads them). Nil while it is unchanged, or when the download is not completed.
    public var fileChange: String?
    /// What the completed file was verified against, and by whom ("sha-256 from the server (Repr-Digest)"); nil
    /// before it completed, or for a download completed by a version of Haul that did not keep this.
    public var verification: DownloadVerification?

    /// Free-form application data given at `add`.
    public var metadata: [String: String] { options.metadata }
    /// Bytes on disk so far.
    public var receivedBytes: Int64 { progress.receivedBytes }
    /// The full size; nil while unknown.
    public var totalBytes: Int64? { progress.expectedBytes }
    /// 0…1, or nil while the size is unknown.
    public var fraction: Double? { state == .completed ? 1 : progress.fraction }
    /// Whether it waits for room on its file system (``FreeSpacePolicy``): running, but holding no slot and
    /// fetching nothing until there is; ``lastError`` says how much it needs ("waiting for space: …").
    public var isWaitingForSpace: Bool { state == .running && lastError?.code == .diskFull }
    /// True once the file is complete at its destination.
    public var isCompleted: Bool { state == .completed }
}
