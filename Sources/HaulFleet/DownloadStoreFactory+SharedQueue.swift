import HaulKit

extension DownloadStoreFactory {
    /// A shared PostgreSQL queue (``SharedQueue``) that many managers, on many machines, work through together.
    ///
    /// A download added without a destination goes to the download directory of the manager that runs it. The store
    /// waits for its database on the calling thread: don't use it with `TaskPlacement.runTasksOnEventLoops()`.
    public static func sharedQueue(_ queue: SharedQueue) -> DownloadStoreFactory {
        DownloadStoreFactory(isShared: true) { configuration throws(DownloadError) in
            try PostgresDownloadStore(
                url: queue.url, owner: queue.workerName, leaseTimeout: queue.leaseTimeout,
                logger: configuration.logger)
        }
    }
}
