import Testing

@testable import HaulKit

@Suite("Queue order")
struct DownloadQueueTests {
    @Test("the queue starts higher priorities first, then first come first served")
    func queueOrder() {
        var queue = DownloadQueue()
        queue.insert(1, priority: 0)
        queue.insert(2, priority: 5)
        queue.insert(3, priority: 0)
        queue.insert(4, priority: 5)
        queue.insert(5, priority: -1)
        queue.remove(3)
        queue.insert(1, priority: 0)
        #expect(queue.ids == [2, 4, 1, 5])
        #expect(queue.popFirst() == 2)
        #expect(!queue.contains(2))
        #expect(queue.count == 3)
    }

    @Test("the queue keeps its order across many pops, inserts and removals")
    func queueOrderAtScale() {
        var queue = DownloadQueue()
        var reference: [DownloadID: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        for id in 1...5_000 {
            let priority = Int.random(in: -2...2, using: &generator)
            queue.insert(DownloadID(rawValue: Int64(id)), priority: priority)
            reference[DownloadID(rawValue: Int64(id))] = priority
        }
        func expected() -> [DownloadID] {
            reference.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map(\.key)
        }
        for round in 0..<4 {
            let order = expected()
            for position in 0..<900 {
                let next = queue.popFirst()
                #expect(next == order[position])
                if let next { reference[next] = nil }
            }
            for id in stride(from: 1 + round, through: 5_000, by: 7) {
                let key = DownloadID(rawValue: Int64(id))
                if reference[key] != nil {
                    queue.remove(key)
                    reference[key] = nil
                } else {
                    queue.insert(key, priority: round)
                    reference[key] = round
                }
            }
            #expect(queue.ids == expected())
            #expect(queue.count == reference.count)
            // Popped downloads come back in bulk (held back for their host), some already queued again.
            let popped = (0..<300).compactMap { _ in queue.popFirst() }
            let back = popped.map { (id: $0, priority: reference[$0] ?? 0) } + [(id: expected()[400], priority: 9)]
            reference[expected()[400]] = 9
            queue.insert(contentsOf: back)
            #expect(queue.ids == expected())
            #expect(queue.count == reference.count)
        }
    }
}
