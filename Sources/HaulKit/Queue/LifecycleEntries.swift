/// The lifecycle's entries by download, with how many are in each state, kept as they change: counting the downloads
/// in some states costs the same however many there are (`haul run` asks every few milliseconds whether any is left
/// to run).
struct LifecycleEntries: Sequence, Sendable {
    private var storage: [DownloadID: DownloadLifecycle.Entry] = [:]
    /// How many entries are in each state, at the place ``index(_:)`` gives it.
    private var counts = [Int](repeating: 0, count: DownloadState.allCases.count)

    subscript(id: DownloadID) -> DownloadLifecycle.Entry? {
        get { storage[id] }
        set {
            let old: DownloadLifecycle.Entry?
            if let newValue {
                old = storage.updateValue(newValue, forKey: id)
            } else {
                old = storage.removeValue(forKey: id)
            }
            if let old { counts[Self.index(old.phase.state)] -= 1 }
            if let newValue { counts[Self.index(newValue.phase.state)] += 1 }
        }
    }

    /// How many downloads are in `state`.
    func count(in state: DownloadState) -> Int { counts[Self.index(state)] }

    var isEmpty: Bool { storage.isEmpty }
    var values: Dictionary<DownloadID, DownloadLifecycle.Entry>.Values { storage.values }

    mutating func reserveCapacity(_ count: Int) { storage.reserveCapacity(count) }

    func makeIterator() -> Dictionary<DownloadID, DownloadLifecycle.Entry>.Iterator { storage.makeIterator() }

    private static func index(_ state: DownloadState) -> Int {
        switch state {
        case .queued: 0
        case .running: 1
        case .paused: 2
        case .completed: 3
        case .failed: 4
        case .interrupted: 5
        }
    }
}
