import HaulKit

extension DownloadManager {
    /// How many snapshots a command asks for at a time: a queue of 100,000 is never all in snapshots at once.
    static let snapshotsPerCall = 4096

    /// Hands the snapshots of `ids` to `body` in order, a few thousand at a time (unknown ids are left out).
    nonisolated func forEachBatch(
        ofSnapshots ids: [DownloadID], _ body: ([DownloadSnapshot]) async throws -> Void
    ) async rethrows {
        for start in stride(from: 0, to: ids.count, by: Self.snapshotsPerCall) {
            try await body(await snapshots(of: Array(ids[start..<min(start + Self.snapshotsPerCall, ids.count)])))
        }
    }
}
