/// How a ``DownloadManager`` makes the store that records its downloads: the embedded SQLite database
/// (``sqlite``, the default), memory only (``inMemory``), or another backend, such as HaulFleet's shared PostgreSQL
/// queue (`.sharedQueue(SharedQueue(url: …))`).
///
/// Set it as ``DownloadManager/Configuration/store``; the manager calls it once, when it opens. HaulKit itself
/// links no database client but SQLite's: a backend comes from the module that provides it.
public struct DownloadStoreFactory: Sendable {
    /// Whether several managers, on several machines, share the store: a download added without a destination then
    /// goes to the download directory of the manager that runs it.
    public let isShared: Bool
    /// Opens (or creates) the store for a manager with this configuration.
    package let make: @Sendable (DownloadManager.Configuration) async throws(DownloadError) -> any DownloadStore

    /// A factory of another backend (a target of this package: the store protocol is not public).
    package init(
        isShared: Bool,
        make: @escaping @Sendable (DownloadManager.Configuration) async throws(DownloadError) -> any DownloadStore
    ) {
        self.isShared = isShared
        self.make = make
    }

    /// The embedded SQLite database at ``DownloadManager/Configuration/databaseURL`` (made if missing): the default.
    public static let sqlite = DownloadStoreFactory(isShared: false) { configuration throws(DownloadError) in
        // Opening migrates the schema (blocking file I/O, once): on NIO's blocking thread pool.
        do {
            return try await onBlockingPool { try SQLiteDownloadStore(path: configuration.databaseURL.path) }
        } catch let error as DownloadError {
            throw error
        } catch {
            throw .stateDatabase(path: configuration.databaseURL.path, reason: "\(error)")
        }
    }

    /// Downloads recorded in memory only: no state file is read or written (``DownloadManager/Configuration/databaseURL``
    /// is not used), and the manager's downloads are gone when it is. Each manager gets a store of its own.
    ///
    /// For an app whose downloads need not outlive it (a preview, a one-off fetch): everything else works as with
    /// ``sqlite`` (part files, checkpoints, resuming after a failure, hooks), but a download left unfinished when the
    /// process ends is not continued by the next one, and its part file stays where it was.
    public static let inMemory = DownloadStoreFactory(isShared: false) { _ throws(DownloadError) in
        InMemoryDownloadStore()
    }

    /// Hands out `store`, made already (the same one to every manager that uses this factory).
    package static func using(_ store: any DownloadStore, isShared: Bool = false) -> DownloadStoreFactory {
        DownloadStoreFactory(isShared: isShared) { _ throws(DownloadError) in store }
    }
}
