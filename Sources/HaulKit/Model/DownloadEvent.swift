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
        /// The completed file changed on disk since Haul put it there (`how`: "is gone", "is 1048576 bytes now,
        /// 10485760 when it was downloaded"), and what is done about it.
        case fileChanged(how: String, action: FileChangeAction)
        /// The download waits for room on its file system (`shortage`), or, with nil, goes on: there is room again
        /// (``FreeSpacePolicy``). It stays running meanwhile, without a slot.
        case waitingForSpace(FreeSpaceShortage?)
        /// The complete file was verified (or why it was not), just before it completes; `sources`: the bytes each
        /// source served.
        case verified(DownloadVerification, sources: [DownloadSourceBytes])
        /// The download now fetches over `count` connections (``DownloadOptions/adaptiveConnections``), and why: the
        /// speed measured with the previous count, the host's allowance, or a refusal.
        case connections(Int, reason: String)
    }

    /// What is done about a completed file that changed on disk (``Change/fileChanged(how:action:)``).
    public enum FileChangeAction: String, Sendable, Hashable {
        /// Its bytes are read first: the same SHA-256 keeps it; otherwise it is fetched again.
        case checkingItsBytes
        /// Fetched again; the new copy replaces the file only once it is complete.
        case fetchingAgain
        /// Resumed from the bytes of the shorter file; the whole file must then have the SHA-256 it had.
        case resumingFromItsBytes
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
