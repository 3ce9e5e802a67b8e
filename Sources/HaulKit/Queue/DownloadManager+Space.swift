import Foundation

extension DownloadManager {
    /// A job waits for room on its file system (`shortage`), or has room again (nil). While it waits it holds no
    /// slot (the next queued download starts: it may write elsewhere), and its record says why
    /// (``DownloadError/waitingForSpace(_:)`` as its last error, while it stays `running`), so `haul list` in
    /// another process, the dashboard and `tellStatus` show "waiting for space".
    func jobWaitsForSpace(_ id: DownloadID, _ shortage: FreeSpaceShortage?) async {
        guard jobs[id] != nil, var record = records[id], record.state == .running else { return }
        if let shortage {
            record.lastError = .waitingForSpace(shortage)
            configuration.logger.warning(
                "waiting for space", metadata: ["download": "\(id)", "shortage": "\(shortage)"])
        } else {
            guard record.lastError?.code == .diskFull else { return }
            record.lastError = nil
            configuration.logger.info("space available again", metadata: ["download": "\(id)"])
        }
        record.updatedAt = Date()
        records[id] = record
        do {
            try await store.saveLifecycle([record])
        } catch {
            configuration.logger.error(
                "cannot record the wait for space", metadata: ["download": "\(id)", "error": "\(error)"])
        }
        hub.yield(id, .waitingForSpace(shortage))
        if shortage != nil, lifecycle.spaceRanOut(id) { await schedule() }
    }
}
