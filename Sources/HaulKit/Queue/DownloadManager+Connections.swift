import Foundation

extension DownloadManager {
    /// Changes how many connections a download fetches its parts with (1…32, ``DownloadOptions/connections``); a
    /// running download uses the new number from its next run (after a pause, a restart or a new process), as with
    /// ``setMirrors(_:for:)``. The number is fixed from then on: a download that chose its count by measurement
    /// (``DownloadOptions/adaptiveConnections``) stops choosing.
    public func setConnections(_ connections: Int, for id: DownloadID) async throws(DownloadError) {
        guard (1...32).contains(connections) else {
            throw .invalidRequest("connections must be 1 to 32, got \(connections)")
        }
        var record = try await existing(id)
        guard record.options.connections != connections || record.options.adaptiveConnections else { return }
        record.options.connections = connections
        // A number fixes the count: the download no longer chooses it by measurement (`-x auto`).
        record.options.adaptiveConnections = false
        record.updatedAt = Date()
        records[id] = record
        try await store.saveSettings(record)
    }
}
