import Foundation
import HaulTestSupport
import Logging
import Testing

@testable import HaulFleet
@testable import HaulKit

/// The outbox of both stores: a row per event and target, written by the state change itself, delivered in order
/// per download and target, and nothing at all without targets.
@Suite("Event outbox")
struct EventOutboxTests {
    static let targets = [
        EventTarget(name: "hook", kinds: [.complete, .error]),
        EventTarget(name: "webhook http://r/1", kinds: Set(OutboxEventKind.allCases)),
    ]

    /// Writes state changes through `store` and checks the rows they make, their order and their settling.
    static func expectRowsFollowChanges(_ store: any DownloadStore, _ outbox: any EventOutbox) async throws {
        var records = try await store.insert([
            DownloadStoreTests.queued("http://a/1"), DownloadStoreTests.queued("http://a/2"),
        ])
        #expect(try await outbox.depth() == 0, "an insert reports nothing")
        try await store.recordRunning(records)
        records[0].state = .running
        records[1].state = .running
        // The same state written again reports nothing.
        try await store.saveLifecycle(records)
        records[0].state = .completed
        records[0].destinationPath = "/d/1"
        records[0].fingerprint = FileFingerprint(
            size: 42, modified: 1, identity: "i", sha256: String(repeating: "a", count: 64))
        records[1].state = .failed
        records[1].lastError = .httpStatus(404, reason: "Not Found", url: "http://a/2")
        try await store.saveTransfers([records[0]])
        try await store.saveLifecycle(records)
        // start ×2 for the webhook; complete and error for both targets.
        #expect(try await outbox.depth() == 6)
        #expect(try await outbox.pending(targets: ["hook"]) == 2)

        let webhook = "webhook http://r/1"
        let first = try await outbox.dueEvents(targets: [webhook], limit: 10, lease: .seconds(30), excluding: [])
        // Only the oldest row of each download: the starts.
        #expect(first.map(\.kind) == [.start, .start])
        #expect(first.map(\.downloadID) == [records[0].downloadID, records[1].downloadID])
        #expect(Set(first.map(\.eventID)).count == 2)
        // A row being delivered is not handed out again, and blocks its download's later rows.
        #expect(
            try await outbox.dueEvents(
                targets: [webhook], limit: 10, lease: .seconds(30), excluding: Set(first.map(\.sequence))
            )
            .isEmpty)
        try await outbox.settle(first[0].sequence)
        try await outbox.postpone(first[1].sequence, attempts: 1, next: Date().addingTimeInterval(3600), reason: "503")
        let second = try await outbox.dueEvents(targets: [webhook], limit: 10, lease: .seconds(30), excluding: [])
        // Download 1's completion is next; download 2's error waits behind its postponed start.
        #expect(second.count == 1)
        let completion = try #require(second.first)
        #expect(completion.kind == .complete && completion.downloadID == records[0].downloadID)
        #expect(
            completion.file == "/d/1" && completion.size == 42 && completion.sha256 == String(repeating: "a", count: 64)
        )
        #expect(completion.url == "http://a/1")

        // Rows of different downloads written in one statement come in any order (PostgreSQL's batched update).
        let hooks = try await outbox.dueEvents(targets: ["hook"], limit: 10, lease: .seconds(30), excluding: [])
            .sorted { $0.downloadID < $1.downloadID }
        #expect(hooks.map(\.kind) == [.complete, .error])
        // One event, one id, whichever the target.
        #expect(hooks[0].eventID == completion.eventID)
        #expect(hooks[1].errorCode == DownloadError.httpStatus(404, reason: "", url: "").code.rawValue)
        #expect(hooks[1].error?.contains("404") == true)

        // A removal before the end reports a stop; one of a finished download does not.
        var third = try await store.insert([DownloadStoreTests.queued("http://a/3")])[0]
        third.state = .paused
        try await store.saveLifecycle([third])
        try await store.delete([third.downloadID, records[0].downloadID])
        let rows = try await outbox.pending(targets: [webhook])
        #expect(rows == 5, "start 2 (postponed), complete 1, error 2, pause 3, stop 3")
    }

    @Test("SQLite: each state change makes one row per target in its own transaction, delivered in order")
    func sqliteRows() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteDownloadStore(path: directory.file("haul.sqlite").path)
        let outbox = try await store.enableOutbox(for: Self.targets)
        try await Self.expectRowsFollowChanges(store, outbox)
        #if os(Linux)
        // Another store (another open file description: as another process) cannot deliver to a target this one
        // holds, until it lets go.
        let other = try SQLiteDownloadStore(path: directory.file("haul.sqlite").path)
        let otherOutbox = try await other.enableOutbox(for: Self.targets)
        #expect(
            try await otherOutbox.dueEvents(targets: ["hook"], limit: 10, lease: .seconds(1), excluding: []).isEmpty)
        await outbox.close()
        #expect(
            try await otherOutbox.dueEvents(targets: ["hook"], limit: 10, lease: .seconds(1), excluding: []).count == 2)
        #endif
    }

    @Test("memory: the same rows; one outbox at a time delivers to a target, until it closes or is gone")
    func memoryRows() async throws {
        let store = InMemoryDownloadStore()
        let outbox = try store.enableOutbox(for: Self.targets)
        try await Self.expectRowsFollowChanges(store, outbox)
        // Another handle (as another process) cannot deliver to a target this one holds, until it lets go; its own
        // changes record nothing without targets of its own.
        let other = InMemoryDownloadStore(sharingRecordsOf: store)
        var otherOutbox: (any EventOutbox)? = try other.enableOutbox(for: Self.targets)
        #expect(try await otherOutbox?.dueEvents(targets: ["hook"], limit: 10, lease: .seconds(1), excluding: []) == [])
        await outbox.close()
        let hooks = try await otherOutbox?.dueEvents(targets: ["hook"], limit: 10, lease: .seconds(1), excluding: [])
        #expect(hooks?.count == 2)
        #expect(try await outbox.dueEvents(targets: ["hook"], limit: 10, lease: .seconds(1), excluding: []) == [])
        otherOutbox = nil
        #expect(try await outbox.dueEvents(targets: ["hook"], limit: 10, lease: .seconds(1), excluding: []).count == 2)
        let quiet = InMemoryDownloadStore(sharingRecordsOf: store)
        let before = try await outbox.depth()
        var record = try quiet.insert([DownloadStoreTests.queued("http://a/9")])[0]
        record.state = .paused
        try quiet.saveLifecycle([record])
        #expect(try await outbox.depth() == before)
    }

    @Test("SQLite without targets records nothing: no trigger, an empty table")
    func sqliteWithoutTargets() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("haul.sqlite").path
        let store = try SQLiteDownloadStore(path: path)
        var record = try await store.insert([DownloadStoreTests.queued("http://a/1")])[0]
        record.state = .completed
        try await store.saveLifecycle([record])
        let reader = try SQLiteDownloadStore(path: path)
        let outbox = try await reader.enableOutbox(for: [])
        #expect(try await outbox.depth() == 0)
    }

    @Test(
        "PostgreSQL: the same rows; two workers never take the same row, and a dead worker's lease runs out",
        .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"))
    func postgresRows() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let store = try await PostgresStoreTests.store(url, owner: "a")
        let outbox = try await store.enableOutbox(for: Self.targets)
        try await Self.expectRowsFollowChanges(store, outbox)
        let other = try await PostgresStoreTests.store(url, owner: "b")
        let otherOutbox = try await other.enableOutbox(for: Self.targets)
        // Leased for a minute, so that the other worker's look comes well within it however loaded the machine.
        let taken = try await outbox.dueEvents(targets: ["hook"], limit: 10, lease: .seconds(60), excluding: [])
        #expect(taken.count == 2)
        #expect(
            try await otherOutbox.dueEvents(targets: ["hook"], limit: 10, lease: .seconds(30), excluding: []).isEmpty)
        // The holder takes its own rows again with a short lease, then dies: the lease runs out.
        let renewed = try await outbox.dueEvents(
            targets: ["hook"], limit: 10, lease: .milliseconds(300), excluding: [])
        #expect(renewed.map(\.sequence) == taken.map(\.sequence))
        try await Task.sleep(for: .milliseconds(500))
        let takenOver = try await otherOutbox.dueEvents(
            targets: ["hook"], limit: 10, lease: .seconds(30), excluding: [])
        #expect(takenOver.map(\.sequence) == taken.map(\.sequence))
        // A worker whose session names no targets writes no rows.
        let quiet = try await PostgresStoreTests.store(url, owner: "c")
        let before = try await outbox.depth()
        var record = try await quiet.insert([DownloadStoreTests.queued("http://a/9")])[0]
        record.state = .paused
        try await quiet.saveLifecycle([record])
        #expect(try await outbox.depth() == before)
        await server.stop()
    }
}
