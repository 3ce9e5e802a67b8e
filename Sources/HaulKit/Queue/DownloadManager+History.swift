import Foundation

/// The completed downloads a manager does not keep in memory (``DownloadManager/Configuration/keepsHistoryInMemory``
/// false): read from the store when they are asked for, so that queries answer as if they were all there.
extension DownloadManager {
    /// Reads completed download `id` from the store into memory (it is asked for by id: removed, resumed, verified);
    /// nil when there is none, or it is not a completed one (those are all in memory).
    func loadHistory(_ id: DownloadID) async -> DownloadRecord? {
        guard historyOnDisk, records[id] == nil, let stored = try? await store.fetch(id), stored.state == .completed
        else { return nil }
        // Read again after the await: a call meanwhile may have loaded it (it is then kept as it is).
        if let record = records[id] { return record }
        rememberHistory([stored])
        return stored
    }

    /// Takes completed records read from the store into memory, without announcing them (they are not new).
    func rememberHistory(_ stored: [DownloadRecord]) {
        for record in stored where records[record.downloadID] == nil {
            remember(record)
            _ = lifecycle.load(
                record.downloadID, recorded: record.state, priority: record.options.priority, claimedElsewhere: false,
                owner: record.owner == nil || record.owner == ownerText ? .queue : .gone)
        }
    }

    /// The records of `ids`, from memory or, for history not in memory, from the store (without keeping them).
    func lookUp(_ ids: [DownloadID]) async -> [DownloadID: DownloadRecord] {
        var found: [DownloadID: DownloadRecord] = [:]
        var missing: [DownloadID] = []
        for id in ids {
            if let record = records[id] { found[id] = record } else { missing.append(id) }
        }
        if historyOnDisk, !missing.isEmpty, let stored = try? await store.fetch(missing) {
            for record in stored { found[record.downloadID] = record }
        }
        return found
    }

    /// The completed downloads in the store and not in memory, oldest first (none when the history is in memory).
    func historyIDs() async -> [DownloadID] {
        guard historyOnDisk, let ids = try? await store.completedIDs() else { return [] }
        return ids.filter { records[$0] == nil }
    }

    /// The completed downloads of the store that URLs with `keys` may be asked for again: read into memory, in one
    /// read of the store for all of them.
    func loadHistory(matching keys: [String]) async {
        guard historyOnDisk, !keys.isEmpty else { return }
        let wanted = Set(keys)
        guard let stored = try? await store.fetchRecords(urlBases: wanted.map(URLBase.of)) else {
            return
        }
        rememberHistory(stored.filter { $0.state == .completed && wanted.contains(ResourceKey.of($0.url)) })
    }
}
