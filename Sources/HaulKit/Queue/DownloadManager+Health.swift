import Foundation

extension DownloadManager {
    /// Checks that the store is reachable and takes writes now: a write transaction is opened and rolled back,
    /// changing nothing (a daemon's `/readyz`). A networked store connects again first if its connection was lost.
    ///
    /// Runs on a blocking-I/O thread, not on the manager: a store that hangs does not hold the manager up.
    /// - Throws: why not (``DownloadError/Code/stateDatabase``, or the shared database's error).
    public nonisolated func checkStore() async throws(DownloadError) {
        let store = store
        do {
            try await onBlockingThread { try store.probe() }
        } catch let error as DownloadError {
            throw error
        } catch {
            throw .internalError("the store check did not run: \(error)")
        }
    }
}
