import Foundation

extension DownloadManager {
    /// Checks that the store is reachable and takes writes now: a write transaction is opened and rolled back,
    /// changing nothing (a daemon's `/readyz`). A networked store connects again first if its connection was lost.
    ///
    /// Awaits the store without the manager: a store that hangs does not hold the manager up.
    /// - Throws: why not (``DownloadError/Code/stateDatabase``, or the shared database's error).
    public nonisolated func checkStore() async throws(DownloadError) {
        try await store.probe()
    }
}
