/// Items waiting to be handled in groups, one group at a time: whoever adds an item while nobody is handling them
/// starts, and takes group after group until none is left. Kept in a `Mutex` by its owner (``FinishingQueue``,
/// ``TransferRecorder``).
struct GroupQueue<Item> {
    private var waiting: [Item] = []
    private var handling = false
    /// Groups taken so far.
    private(set) var groupCount = 0

    /// Items waiting for the next group.
    var count: Int { waiting.count }

    /// Adds `item` to the next group; returns whether the caller must now start handling groups (nobody was).
    mutating func add(_ item: Item) -> Bool {
        waiting.append(item)
        defer { handling = true }
        return !handling
    }

    /// Takes every item waiting as the next group; empty when none waits, and handling has then stopped (unless
    /// `stillHandling`: the caller has more to do first, and asks again).
    mutating func nextGroup(stillHandling: Bool = false) -> [Item] {
        defer { waiting.removeAll(keepingCapacity: true) }
        if !waiting.isEmpty {
            groupCount += 1
        } else if !stillHandling {
            handling = false
        }
        return waiting
    }
}

/// An item waiting in a ``GroupQueue``, with the caller that waits until it is handled and gets its `Output`.
struct GroupWaiter<Item: Sendable, Output: Sendable>: Sendable {
    var item: Item
    var continuation: CheckedContinuation<Output, any Error>

    /// Lets the caller go on with `output`.
    func end(_ output: Output) { continuation.resume(returning: output) }

    /// Throws `failure` to the caller.
    func fail(_ failure: any Error) { continuation.resume(throwing: failure) }
}

extension GroupWaiter where Output == Void {
    /// Lets the caller go on, or throws `failure` to it.
    func end(_ failure: (any Error)?) {
        if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
    }
}
