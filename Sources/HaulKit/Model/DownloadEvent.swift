import Foundation

/// Something that happened to a download, delivered through ``DownloadManager/events()`` (or to a handler,
/// ``DownloadManager/observeEvents(_:)``).
public struct DownloadEvent: Sendable {
    /// What happened.
    public enum Change: Sendable {
        /// The download was added.
        case added(DownloadSnapshot)
        /// The download changed state; state changes are delivered as they happen.
        case status(DownloadStatus)
        /// Bytes arrived; at most a few of these per second per download.
        case progress(DownloadProgress)
        /// The partial data was discarded and the download started over, for `reason`.
        case restarted(RestartReason)
        /// A transient error; the download tries again after `delay`.
        case retrying(DownloadError, attempt: Int, delay: Duration)
        /// A mirror (``DownloadOptions/mirrors``) failed or served something else, and is not used again in this run;
        /// its segments go to the other sources.
        case mirrorDropped(URL, reason: String)
    }

    public var id: DownloadID
    public var change: Change

    public init(id: DownloadID, change: Change) {
        self.id = id
        self.change = change
    }
}

/// Why a download discarded what it had and started from byte 0.
public enum RestartReason: String, Sendable, Hashable, Codable {
    /// The server answered a range request with the whole file (`200`): it does not support ranges.
    case serverIgnoredRange
    /// The validators (ETag, Last-Modified, size) changed: the remote file is a new version.
    case resourceChanged
    /// The bytes re-fetched before the resume point differ from the bytes on disk.
    case contentMismatch
    /// The server sent a `Content-Range` that does not match what was asked for.
    case rangeMismatch
    /// The expected checksum did not match, so the data on disk was wrong.
    case checksumMismatch
}
