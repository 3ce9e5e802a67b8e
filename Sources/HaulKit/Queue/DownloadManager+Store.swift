extension DownloadManager {
    /// Opens the state database (creating it if needed) and, if `resumesStoredDownloads`, continues its downloads.
    ///
    /// The store is the one ``Configuration/store`` makes: the SQLite database at ``Configuration/databaseURL`` by
    /// default, ``DownloadStoreFactory/inMemory`` for downloads kept in memory only.
    public init(configuration: Configuration = Configuration()) async throws(DownloadError) {
        // Before the store is made: a refused configuration creates no database.
        try Self.checkLimits(configuration)
        try await self.init(opened: configuration, store: configuration.store.make(configuration))
    }

    /// A manager on `store`, made already (an `InMemoryDownloadStore` that tests share between managers, say),
    /// instead of one ``Configuration/store`` makes; its configuration's `store` then hands out this one. `isShared`:
    /// whether managers on other machines share it (``DownloadStoreFactory/isShared``).
    package init(
        configuration: Configuration = Configuration(), store: any DownloadStore, isShared: Bool = false
    ) async throws(DownloadError) {
        var configuration = configuration
        configuration.store = .using(store, isShared: isShared)
        try await self.init(opened: configuration, store: store)
    }

    /// Refuses a configuration without a download slot or a connection per host.
    static func checkLimits(_ configuration: Configuration) throws(DownloadError) {
        guard configuration.maxConcurrentDownloads >= 1, configuration.maxConnectionsPerHost >= 1 else {
            throw .invalidRequest("maxConcurrentDownloads and maxConnectionsPerHost must be at least 1")
        }
    }
}
