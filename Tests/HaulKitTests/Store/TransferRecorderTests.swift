import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

@Suite("Transfer recorder (group commit of the records new part files need)")
struct TransferRecorderTests {
    /// Commits that hold the first one at a gate until ``open()``: suspended, so no thread waits (a thread blocked
    /// here would be one of the cooperative pool's few, and two such tests at once would stop every test).
    final class GatedCommits: Sendable {
        private struct State {
            var groups: [[DownloadID]] = []
            var entered = false
            var open = false
            /// The caller of ``firstCommitBegan()``, until the first commit begins.
            var enteredWaiter: CheckedContinuation<Void, Never>?
            /// The first commit, held until ``open()``.
            var held: CheckedContinuation<Void, Never>?
        }

        private let state = Mutex(State())
        private let failing: Set<Int>

        /// Commits whose index (from 0) is in `failing` throw.
        init(failing: Set<Int> = []) {
            self.failing = failing
        }

        var committed: [[DownloadID]] { state.withLock { $0.groups } }

        func commit(_ records: [DownloadRecord]) async throws(DownloadError) {
            let index = state.withLock { state in
                state.groups.append(records.map(\.downloadID))
                return state.groups.count - 1
            }
            if index == 0 {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let (waiter, goOn) = state.withLock { state in
                        state.entered = true
                        defer { state.enteredWaiter = nil }
                        if !state.open { state.held = continuation }
                        return (state.enteredWaiter, state.open)
                    }
                    waiter?.resume()
                    if goOn { continuation.resume() }
                }
            }
            if failing.contains(index) { throw .stateDatabase(path: "test", reason: "the disk is full") }
        }

        /// Returns once the first commit has begun.
        func firstCommitBegan() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if !state.entered { state.enteredWaiter = continuation }
                    return state.entered
                }
                if now { continuation.resume() }
            }
        }

        func open() {
            let held = state.withLock { state in
                state.open = true
                defer { state.held = nil }
                return state.held
            }
            held?.resume()
        }
    }

    static func record(_ id: Int64) -> DownloadRecord {
        var record = DownloadRecord(
            url: "http://example.com/\(id)", options: DownloadOptions(), state: .running, createdAt: Date(),
            updatedAt: Date())
        record.id = id
        return record
    }

    /// Waits until `count` records wait behind the commit in progress.
    static func waitUntil(_ recorder: TransferRecorder, holds count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while recorder.waitingCount < count {
            guard ContinuousClock.now < deadline else { throw HarnessTimeout(what: "\(count) waiting records") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Saves record 1, its commit held at the gate; saves `behind` while it is held; opens the
    /// gate once they all wait. Returns the first save and those behind it.
    static func saveBehindHeldCommit(
        _ recorder: TransferRecorder, _ commits: GatedCommits, behind ids: ClosedRange<Int64>
    ) async throws -> (first: Task<Void, any Error>, behind: [Task<Void, any Error>]) {
        let first = Task { try await recorder.save(Self.record(1)) }
        await commits.firstCommitBegan()
        let behind = ids.map { id in Task { try await recorder.save(Self.record(id)) } }
        try await Self.waitUntil(recorder, holds: ids.count)
        commits.open()
        return (first, behind)
    }

    @Test("records that arrive during a commit are written together in the next one, each caller resumed after it")
    func groupsArrivals() async throws {
        let commits = GatedCommits()
        let recorder = TransferRecorder { records throws(DownloadError) in try await commits.commit(records) }
        let (first, others) = try await Self.saveBehindHeldCommit(recorder, commits, behind: 2...9)
        try await first.value
        for other in others { try await other.value }

        let committed = commits.committed
        #expect(committed.count == 2)
        #expect(committed.first == [1])
        #expect(Set(committed.last ?? []) == Set((2...9).map { DownloadID(rawValue: Int64($0)) }))
        #expect(recorder.commitCount == 2)
        #expect(recorder.waitingCount == 0)
    }

    @Test("a failed commit fails every record in it, and the next group is written")
    func failureFailsItsGroup() async throws {
        let commits = GatedCommits(failing: [1])
        let recorder = TransferRecorder { records throws(DownloadError) in try await commits.commit(records) }
        let (first, failing) = try await Self.saveBehindHeldCommit(recorder, commits, behind: 2...4)
        try await first.value
        for task in failing {
            await #expect(throws: DownloadError.self) { try await task.value }
        }
        try await recorder.save(Self.record(5))
        #expect(commits.committed.last == [5])
    }

    @Test("a lone record is committed in a transaction of its own, its job columns written to SQLite")
    func loneRecord() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteDownloadStore(path: directory.file("state/haul.sqlite").path)
        let recorder = TransferRecorder { [store] records throws(DownloadError) in
            try await store.saveTransfers(records)
        }
        var record = try await store.insert([DownloadStoreTests.queued("http://example.com/a.bin")])[0]
        record.destinationPath = directory.file("a.bin").path
        record.transfer.hasPartData = true
        record.transfer.etag = "\"v1\""
        try await recorder.save(record)
        let stored = try #require(try await store.fetch(record.downloadID))
        #expect(stored.destinationPath == record.destinationPath)
        #expect(stored.transfer.etag == "\"v1\"")
        #expect(recorder.commitCount == 1)
    }
}
