import Foundation
import HaulTestSupport
import Logging
import Synchronization
import Testing

@testable import HaulEvents
@testable import HaulKit

/// The dispatcher over an in-memory outbox with the real rules (oldest row per download and target, rows in flight
/// left out): how many hooks run at once, and what a failing receiver does to a row.
@Suite("Event dispatcher")
struct EventDispatcherTests {
    /// An ``EventOutbox`` in memory, with the stores' order rule.
    final class MemoryOutbox: EventOutbox {
        struct Row {
            var event: OutboxEvent
            var next = Date.distantPast
        }
        let rows: Mutex<[Row]>

        init(_ events: [OutboxEvent]) { rows = Mutex(events.map { Row(event: $0) }) }

        func dueEvents(targets: [String], limit: Int, lease: Duration, excluding: Set<Int64>) -> [OutboxEvent] {
            rows.withLock { rows in
                var seen = Set<String>()
                var due: [OutboxEvent] = []
                for row in rows.sorted(by: { $0.event.sequence < $1.event.sequence })
                where targets.contains(row.event.target) {
                    // Only the oldest row of each download and target.
                    guard seen.insert("\(row.event.downloadID) \(row.event.target)").inserted else { continue }
                    if row.next <= Date(), !excluding.contains(row.event.sequence) { due.append(row.event) }
                }
                return Array(due.prefix(limit))
            }
        }

        func settle(_ sequence: Int64) { rows.withLock { $0.removeAll { $0.event.sequence == sequence } } }

        func postpone(_ sequence: Int64, attempts: Int, next: Date, reason: String) {
            rows.withLock { rows in
                guard let index = rows.firstIndex(where: { $0.event.sequence == sequence }) else { return }
                rows[index].event.attempts = attempts
                rows[index].next = next
            }
        }

        func depth() -> Int { rows.withLock { $0.count } }
        func pending(targets: [String]) -> Int {
            rows.withLock { $0.filter { targets.contains($0.event.target) }.count }
        }
        func close() {}
        var attempts: [Int] { rows.withLock { $0.map(\.event.attempts) } }
    }

    static func event(
        _ sequence: Int64, download: Int64, target: String, kind: OutboxEventKind = .complete
    )
        -> OutboxEvent
    {
        OutboxEvent(
            sequence: sequence, eventID: "e\(sequence)", target: target, downloadID: DownloadID(rawValue: download),
            kind: kind, url: "http://a/\(download)", file: "/d/\(download)", size: 1, sha256: nil, errorCode: nil,
            error: nil, createdAt: Date(), attempts: 0)
    }

    @Test("at most --max-concurrent-hooks run at once, all of them run, and a download's hooks run in order")
    func boundedHooks() async throws {
        let directory = TemporaryDirectory()
        let script = directory.file("hook.sh")
        let log = directory.file("log").path
        try """
        #!/bin/sh
        echo "begin $HAUL_ID $HAUL_EVENT" >> \(log)
        sleep 0.3
        echo "end $HAUL_ID $HAUL_EVENT" >> \(log)
        """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        var settings = EventSettings()
        settings.hooks = [.start: script.path, .complete: script.path]
        settings.maxConcurrentHooks = 2
        // Six downloads, each a start then a completion.
        let events = (1...6).flatMap { download in
            [
                Self.event(Int64(download), download: Int64(download), target: "hook", kind: .start),
                Self.event(Int64(100 + download), download: Int64(download), target: "hook", kind: .complete),
            ]
        }
        let outbox = MemoryOutbox(events)
        let dispatcher = EventDispatcher(outbox: outbox, settings: settings, logger: Logger(label: "test"))
        await dispatcher.start()
        // 1.8 s of hooks, six rounds of two; a loaded machine has taken 3 s a round to start a shell.
        await dispatcher.drain(within: .seconds(120))
        await dispatcher.stop()
        #expect(outbox.depth() == 0, "every row settled")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 24)
        var running = 0
        var peak = 0
        for line in lines {
            running += line.hasPrefix("begin") ? 1 : -1
            peak = max(peak, running)
        }
        #expect(peak == 2, "at most two at once, and two were used")
        for download in 1...6 {
            let own = lines.filter { $0.split(separator: " ")[1] == "\(download)" }.map { String($0) }
            #expect(
                own == [
                    "begin \(download) start", "end \(download) start", "begin \(download) complete",
                    "end \(download) complete",
                ])
        }
    }

    @Test(
        "a receiver answering 500 gets the event again with backoff, each attempt counted; past the horizon it is dropped"
    )
    func failingReceiver() async throws {
        let receiver = try await WebhookReceiver.start()
        receiver.answer(500)
        var settings = EventSettings()
        settings.webhooks = [receiver.url()]
        settings.backoff.initialDelay = .milliseconds(100)
        settings.backoff.maxDelay = .milliseconds(200)
        settings.backoff.horizon = .seconds(60)
        let target = EventSettings.webhookTarget(receiver.url())
        // An event of now, and one older than the horizon: the first is kept and tried again, the second dropped at
        // its first failure.
        var old = Self.event(2, download: 2, target: target)
        old.createdAt = Date().addingTimeInterval(-3600)
        let outbox = MemoryOutbox([Self.event(1, download: 1, target: target), old])
        let dispatcher = EventDispatcher(outbox: outbox, settings: settings, logger: Logger(label: "test"))
        await dispatcher.start()
        let started = ContinuousClock.now
        func attempts(_ id: String) -> [Int] {
            receiver.deliveries.filter { $0.event?.id == id }.compactMap {
                Int($0.headers["x-haul-delivery-attempt"] ?? "")
            }
        }
        // Until the third failure is recorded too, not only received: a stop while its answer is on its way keeps the
        // row as it was, for the next process.
        while attempts("e1").count < 3 || outbox.attempts.first ?? 0 < 3, started.duration(to: .now) < .seconds(30) {
            try await Task.sleep(for: .milliseconds(50))
        }
        await dispatcher.stop()
        #expect(attempts("e1").prefix(3) == [1, 2, 3], "\(attempts("e1"))")
        #expect(attempts("e2") == [1], "dropped after its one failure")
        #expect(outbox.depth() == 1, "the recent event is kept for later")
        #expect(outbox.attempts.first ?? 0 >= 3)
        await receiver.stop()
    }
}
