import Synchronization
import Testing

@testable import HaulKit

/// ``EventHub``: every subscriber gets each event in the order it subscribed, whatever the order of the dictionary
/// that holds them (which differs from one process to the next, and from one set of tokens to the next).
@Suite("Event hub")
struct EventHubTests {
    /// What the handlers saw, in the order they saw it.
    final class Log: Sendable {
        private let seen = Mutex<[Int]>([])
        func note(_ index: Int) { seen.withLock { $0.append(index) } }
        func take() -> [Int] {
            seen.withLock { seen in
                let taken = seen
                seen = []
                return taken
            }
        }
    }

    @Test("two handlers, whatever their tokens: the one that subscribed first hears each event first")
    func twoInOrder() {
        let log = Log()
        // Tokens k and k + 1 for k from 0 to 63: pairs that a dictionary orders both ways.
        for skipped in 0..<64 {
            let hub = EventHub()
            for _ in 0..<skipped { hub.unsubscribe(hub.subscribe(handler: { _ in })) }
            _ = hub.subscribe(handler: { _ in log.note(0) })
            _ = hub.subscribe(handler: { _ in log.note(1) })
            hub.yield(DownloadID(rawValue: 1), .status(.running))
            #expect(log.take() == [0, 1], "tokens \(skipped) and \(skipped + 1)")
        }
    }

    @Test("many subscribers, handlers and a download's own stream: each event in the order they subscribed")
    func manyInOrder() async {
        let log = Log()
        let hub = EventHub()
        for index in 0..<6 { _ = hub.subscribe(handler: { _ in log.note(index) }) }
        let stream = hub.subscribe(to: DownloadID(rawValue: 7))
        for index in 6..<12 { _ = hub.subscribe(handler: { _ in log.note(index) }) }
        hub.yield(DownloadID(rawValue: 7), .status(.running))
        hub.yield(DownloadID(rawValue: 8), .status(.running))
        #expect(log.take() == Array(0..<12) + Array(0..<12))
        hub.finishAll()
        var heard = 0
        for await event in stream {
            #expect(event.id == DownloadID(rawValue: 7))
            heard += 1
        }
        #expect(heard == 1, "a download's stream hears only its own events")
    }
}
