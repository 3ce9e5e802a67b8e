import Foundation

/// Notices what other processes commit to the store: a cheap change token compared at each look, and when it moved,
/// the records updated since the last look (with a margin) and, if the count differs, which records are left.
struct ChangeWatcher: Sendable {
    /// What changed since the last look.
    struct Changes: Sendable {
        /// Records written since the last look (some may be this process's own writes).
        var updated: [DownloadRecord]
        /// Every record's id, when the number of records differs from what the manager holds (some were deleted).
        var remaining: Set<DownloadID>?
    }

    /// The store's change token at the last look that found changes (or at the start).
    private(set) var lastToken: Int?
    private var lastLook: Date

    init(store: any DownloadStore) async {
        lastToken = try? await store.changeToken()
        lastLook = Date()
    }

    /// What other writers changed since the last look, or nil if nothing did. `known` is how many records the caller
    /// holds, or with `unfinishedOnly`, how many unfinished ones (a caller that keeps the history on disk).
    ///
    /// It runs on the caller's executor (`known` reads the caller's state after the counts are read).
    nonisolated(nonsending) mutating func look(
        at store: any DownloadStore, unfinishedOnly: Bool = false, known: () -> Int
    ) async -> Changes? {
        guard let token = try? await store.changeToken(), token != lastToken else { return nil }
        lastToken = token
        // A margin, so a write committed while the last look ran is not missed.
        let since = lastLook.addingTimeInterval(-2)
        lastLook = Date()
        let updated = (try? await store.fetchUpdated(since: since)) ?? []
        var remaining: Set<DownloadID>?
        if let count = try? await (unfinishedOnly ? store.unfinishedCount() : store.count()), count != known() {
            remaining = try? await store.fetchIDs()
        }
        return Changes(updated: updated, remaining: remaining)
    }
}
