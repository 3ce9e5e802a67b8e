import HaulKit

extension DownloadStoreFactory {
    /// A shared PostgreSQL queue (``SharedQueue``) that many managers, on many machines, work through together.
    ///
    /// A download added without a destination goes to the download directory of the manager that runs it. The
    /// store's calls await postgres-nio's event loops and never block the caller's thread.
    public static func sharedQueue(_ queue: SharedQueue) -> DownloadStoreFactory {
        DownloadStoreFactory(isShared: true) { configuration throws(DownloadError) in
            try await PostgresDownloadStore(
                url: queue.url, owner: queue.workerName, leaseTimeout: queue.leaseTimeout,
                logger: configuration.logger)
        }
    }
}
