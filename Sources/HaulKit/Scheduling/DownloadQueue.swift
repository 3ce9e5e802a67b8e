/// The queued downloads in the order they start: higher priority first, then first added first.
///
/// A sorted array with binary-search insertion and removal: O(log n) to find, cheap to pop, fine for 100k entries.
struct DownloadQueue: Sendable {
    private struct Entry: Comparable {
        var priority: Int
        var id: DownloadID
        static func < (a: Entry, b: Entry) -> Bool {
            a.priority != b.priority ? a.priority > b.priority : a.id < b.id
        }
    }

    private var entries: [Entry] = []
    private var priorities: [DownloadID: Int] = [:]

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    var ids: [DownloadID] { entries.map(\.id) }

    func contains(_ id: DownloadID) -> Bool { priorities[id] != nil }

    mutating func insert(_ id: DownloadID, priority: Int) {
        remove(id)
        let entry = Entry(priority: priority, id: id)
        entries.insert(entry, at: index(of: entry))
        priorities[id] = priority
    }

    mutating func remove(_ id: DownloadID) {
        guard let priority = priorities.removeValue(forKey: id) else { return }
        let entry = Entry(priority: priority, id: id)
        let position = index(of: entry)
        if position < entries.count, entries[position] == entry { entries.remove(at: position) }
    }

    /// Takes the next download to start.
    mutating func popFirst() -> DownloadID? {
        guard !entries.isEmpty else { return nil }
        let first = entries.removeFirst()
        priorities[first.id] = nil
        return first.id
    }

    private func index(of entry: Entry) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle] < entry { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
