import Foundation

/// A PostgreSQL database that many workers, on many machines, drain as one queue, instead of the embedded SQLite
/// file: `configuration.store = .sharedQueue(SharedQueue(url: …))` (`DownloadStoreFactory.sharedQueue(_:)`).
///
/// A worker claims a download with a lease that it renews while it runs it; when a worker dies, its leases run out
/// after ``leaseTimeout`` and another worker takes the downloads over (from the checkpointed bytes when it sees the
/// same files, else from the start).
public struct SharedQueue: Sendable, Hashable {
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE`; `?sslmode=require` (or `verify-full`) for TLS.
    public var url: URL
    /// This worker's name in leases and listings. Default: `HOST:PID`.
    public var workerName: String
    /// How long a worker that stopped renewing keeps its downloads. Default 30 s.
    public var leaseTimeout: Duration

    /// A queue at `url`, this worker named `workerName`, whose leases last `leaseTimeout` without a renewal.
    public init(url: URL, workerName: String = SharedQueue.defaultWorkerName, leaseTimeout: Duration = .seconds(30)) {
        self.url = url
        self.workerName = workerName
        self.leaseTimeout = leaseTimeout
    }

    /// The schema version of the shared queue's tables this version of Haul writes: how many migrations it knows.
    public static var schemaVersion: Int { PostgresDownloadStore.migrations.count }

    /// `HOST:PID`.
    public static var defaultWorkerName: String {
        "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)"
    }
}
