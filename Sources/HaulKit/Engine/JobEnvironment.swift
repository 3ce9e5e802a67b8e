import Logging

/// The engine settings a job runs with, taken from the manager's configuration.
struct EngineSettings: Sendable {
    var retry: RetryPolicy
    var stallTimeout: Duration
    /// Bytes re-fetched before a resume point and compared with the disk.
    var resumeOverlap: Int64
    var checkpointInterval: Duration
    var progressInterval: Duration
    var userAgent: String
    /// The clock that times retry delays (a mock clock in tests).
    var clock: any Clock<Duration>
    var logger: Logger
    var maxConnectionsPerHost: Int
    var minimumSegmentSize: Int64
    /// A response slower than this (bytes per second) over ``lowSpeedWindow`` is dropped and resumed; nil for never.
    var lowestSpeed: Int64?
    var lowSpeedWindow: Duration
    /// Failures injected by tests at points no real fault reaches deterministically.
    var faults: FaultInjection
}

/// Failures that tests inject where the real ones (a failing disk) cannot be made on demand. Empty in production.
struct FaultInjection: Sendable {
    /// The errno a checkpoint's sync of the part file fails with (as a failing disk reports `EIO` once).
    var checkpointSyncErrno: (@Sendable () -> Int32?)?

    init(checkpointSyncErrno: (@Sendable () -> Int32?)? = nil) {
        self.checkpointSyncErrno = checkpointSyncErrno
    }
}

/// Everything a job needs from its manager.
struct JobEnvironment: Sendable {
    let transport: HTTPTransport
    let store: DownloadStore
    let events: EventHub
    let settings: EngineSettings
    let globalLimiter: RateLimiter
    /// Moves complete files into place, many at a time.
    let finishing: FinishingQueue
    /// Asks the manager for a free path for `name` in `directory` and records it for the download.
    let reserveDestination: @Sendable (_ id: DownloadID, _ directory: String, _ name: String) async throws(DownloadError) -> String
}
