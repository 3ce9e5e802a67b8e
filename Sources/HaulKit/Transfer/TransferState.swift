import Synchronization

/// The live state of one running download, shared by its receive loop, its monitor (progress and checkpoints),
/// its checksum follower and the manager's snapshots. Every access is one short lock.
final class TransferState: Sendable {
    struct Values: Sendable {
        /// Contiguous bytes in the part file from offset 0.
        var written: Int64 = 0
        /// The complete size when known.
        var total: Int64?
        /// Bumped whenever the part file is cut back: checkpoints and hashes of an older generation are void.
        var generation: Int64 = 0
        /// Bytes on disk: `written` for one connection, the sum over segments for several.
        var received: Int64 = 0
        /// The plan of a multi-connection transfer.
        var board: SegmentBoard?
        /// Bytes received from the network in this run, including re-verified ones (for the speed gauge).
        var transferred: Int64 = 0
        var bytesPerSecond: Double = 0
        /// `bytesPerSecond` smoothed for the time left (``SpeedGauge/smoothedBytesPerSecond``).
        var smoothedBytesPerSecond: Double = 0
        var activeConnections = 0
        /// The URL of the last request sent (before any redirect): while bytes arrive, its host is credited as
        /// serving (``HostGate``).
        var source: String?
        /// Bytes the checksum follower has read back and hashed (this generation).
        var verified: Int64 = 0
        /// True once the last byte is written and `total` is final.
        var finished = false
        /// The part file being written, once its name is known.
        var file: PartFile?
        /// A write-back failure (a checkpoint's sync failed): the download must not complete.
        var failure: DownloadError?
        /// Set by the monitor when the file system went below the free-space floor: the next write stops the
        /// attempt with it, and the job waits for space (cleared when there is room again).
        var spaceShortage: DownloadError?
    }

    private let values: Mutex<Values>

    init(_ initial: Values) { values = Mutex(initial) }

    var current: Values { values.withLock { $0 } }

    func update<T>(_ body: (inout Values) -> T) -> T { values.withLock { body(&$0) } }

    /// Records `count` new bytes written right after `written`; returns the write-back failure, if one happened
    /// (checked under the same lock, so the receive path takes one lock per write).
    func didWrite(_ count: Int, through end: Int64) -> DownloadError? {
        values.withLock {
            $0.written = end
            $0.received = end
            $0.transferred += Int64(count)
            return $0.failure ?? $0.spaceShortage
        }
    }

    /// Records `count` new bytes written by one of several connections; returns the write-back failure, if any.
    func didReceive(_ count: Int) -> DownloadError? {
        values.withLock {
            $0.received += Int64(count)
            $0.transferred += Int64(count)
            return $0.failure ?? $0.spaceShortage
        }
    }

    /// The write-back failure, if one happened.
    var failure: DownloadError? { values.withLock { $0.failure } }

    var progress: DownloadProgress {
        values.withLock {
            DownloadProgress(
                receivedBytes: $0.received, expectedBytes: $0.total, bytesPerSecond: $0.bytesPerSecond,
                smoothedBytesPerSecond: $0.smoothedBytesPerSecond, transferredBytes: $0.transferred,
                activeConnections: $0.activeConnections)
        }
    }
}
