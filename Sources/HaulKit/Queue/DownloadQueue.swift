/// The queued downloads in the order they start: higher priority first, then first added first.
///
/// A sorted array with binary-search insertion and removal: O(log n) to find, O(1) to append the newest and to pop
/// the next (popped entries are dropped in bulk), fine for 100k entries.
struct DownloadQueue: Sendable {
    private struct Entry: Comparable {
        var priority: Int
        var id: DownloadID
        static func < (a: Entry, b: Entry) -> Bool {
            a.priority != b.priority ? a.priority > b.priority : a.id < b.id
        }
    }

    /// Sorted from `head` on; entries before `head` were popped.
    private var entries: [Entry] = []
    private var head = 0
    private var priorities: [DownloadID: Int] = [:]

    var count: Int { entries.count - head }
    var isEmpty: Bool { count == 0 }
    /// In the order they start.
    var ids: [DownloadID] { entries[head...].map(\.id) }

    func contains(_ id: DownloadID) -> Bool { priorities[id] != nil }

    /// The next `count` to start, in order, without taking them.
    func prefix(_ count: Int) -> [DownloadID] { entries[head..<min(entries.count, head + max(0, count))].map(\.id) }

    mutating func insert(_ id: DownloadID, priority: Int) {
        remove(id)
        let entry = Entry(priority: priority, id: id)
        entries.insert(entry, at: index(of: entry))
        priorities[id] = priority
    }

    /// Inserts many at once: one sort instead of one array shift each.
    mutating func insert(contentsOf added: [(id: DownloadID, priority: Int)]) {
        guard added.count > 8 else {
            for (id, priority) in added { insert(id, priority: priority) }
            return
        }
        for (id, _) in added { remove(id) }
        entries.removeFirst(head)
        head = 0
        entries += added.map { Entry(priority: $0.priority, id: $0.id) }
        entries.sort()
        for (id, priority) in added { priorities[id] = priority }
    }

    mutating func remove(_ id: DownloadID) {
        guard let priority = priorities.removeValue(forKey: id) else { return }
        let entry = Entry(priority: priority, id: id)
        let position = index(of: entry)
        if position < entries.count, entries[position] == entry { entries.remove(at: position) }
    }

    /// Takes the next download to start.
    mutating func popFirst() -> DownloadID? {
        guard head < entries.count else { return nil }
        let first = entries[head]
        head += 1
        if head == entries.count || head > 1024 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        priorities[first.id] = nil
        return first.id
    }

    private func index(of entry: Entry) -> Int {
        var low = head
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle] < entry { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
