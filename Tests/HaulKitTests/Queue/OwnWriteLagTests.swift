import Foundation
import GRDB
import HaulTestSupport
import Testing

@testable import HaulKit

/// A start claims its download from the store, which reads the stored state: while this manager's own write of a
/// resume (or of a completed download queued again) is on its way, that state is still the old one. Here the write
/// is held on its way by another connection that holds the database's write lock, and a start is asked for meanwhile
/// (as the tick's would be).
@Suite("Starts that meet this manager's own writes on their way")
struct OwnWriteLagTests {
    /// Another connection to the harness's database, holding its write lock: the manager's writes wait for it.
    static func holdWriteLock(_ harness: Harness) async throws -> DatabaseQueue {
        var configuration = GRDB.Configuration()
        configuration.busyMode = .timeout(10)
        // The lock is held between two accesses.
        configuration.allowsUnsafeTransactions = true
        let path = Harness.configuration(harness.directory).databaseURL.path
        let lock = try DatabaseQueue(path: path, configuration: configuration)
        try await lock.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
        return lock
    }

    static func release(_ lock: DatabaseQueue) async throws {
        try await lock.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
    }

    /// Whether `id` ends within `timeout` (a download put back to an old state here never would).
    static func ends(_ id: DownloadID, of manager: DownloadManager, within timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let state = await manager.states(of: [id])[0]
            if state == .completed || state == .failed { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test("a start while a resume's write is on its way runs the download once the write is in, never pauses it")
    func startDuringResume() async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/resumed.bin", size: 5_000)
        let id = try await harness.manager.add(url, paused: true)
        let lock = try await Self.holdWriteLock(harness)
        let resuming = Task { try await harness.manager.resume(id) }
        // Queued here; its `queued` waits for the lock.
        try await waitUntil { await harness.manager.snapshot(id)?.state == .queued }
        let starting = Task { await harness.manager.schedule() }
        // The start's claim reads `paused` from the store. The old code took that view at once: paused here.
        try? await waitUntil(timeout: .seconds(1)) { await harness.manager.snapshot(id)?.state == .paused }
        try await Self.release(lock)
        try await resuming.value
        await starting.value
        let ended = try await Self.ends(id, of: harness.manager, within: .seconds(30))
        let state = await harness.manager.snapshot(id)?.state
        #expect(ended, "the resume was undone: \(String(describing: state))")
        if ended { expectContent(try await harness.manager.wait(for: id), size: 5_000) }
        #expect(harness.origin.requests(to: "/resumed.bin").count == 1)
        await harness.shutdown()
    }

    @Test("a start while a changed completed file's reopening is on its way fetches it again, never completes it")
    func startDuringReopening() async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/reopened.bin", size: 6_000)
        let id = try await harness.manager.add(url)
        let file = try await harness.manager.wait(for: id)
        // Edited in place, the same size: fetched again from its start.
        try Data(repeating: 0x55, count: 6_000).write(to: file)
        let lock = try await Self.holdWriteLock(harness)
        // Asked for again: its changed file is to be fetched again; the reopening's write waits for the lock.
        let adding = Task { try await harness.manager.add(url) }
        try await Task.sleep(for: .milliseconds(200))
        let starting = Task { await harness.manager.schedule() }
        try await Task.sleep(for: .milliseconds(500))
        try await Self.release(lock)
        #expect(try await adding.value == id)
        await starting.value
        let ended = try await Self.ends(id, of: harness.manager, within: .seconds(30))
        let state = await harness.manager.snapshot(id)?.state
        #expect(ended, "the reopening was undone: \(String(describing: state))")
        if ended { #expect(try await harness.manager.wait(for: id) == file) }
        expectContent(file, size: 6_000)
        #expect(harness.origin.requests(to: "/reopened.bin").count == 2)
        await harness.shutdown()
    }
}
