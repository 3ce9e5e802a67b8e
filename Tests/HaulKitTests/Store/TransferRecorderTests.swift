import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

@Suite("Transfer recorder (group commit of the records new part files need)")
struct TransferRecorderTests {
    /// What the recorder committed, group by group; the first commit waits at a gate until the test opens it.
    final class GatedCommits: Sendable {
        private let groups = Mutex<[[DownloadID]]>([])
        private let entered = DispatchSemaphore(value: 0)
        private let gate = DispatchSemaphore(value: 0)
        private let failing: Set<Int>

        /// Commits whose index (from 0) is in `failing` throw.
        init(failing: Set<Int> = []) {
            self.failing = failing
        }

        var committed: [[DownloadID]] { groups.withLock { $0 } }

        func commit(_ records: [DownloadRecord]) throws(DownloadError) {
            let index = groups.withLock { groups in
                groups.append(records.map(\.downloadID))
                return groups.count - 1
            }
            if index == 0 {
                entered.signal()
                gate.wait()
            }
            if failing.contains(index) { throw .stateDatabase(path: "test", reason: "the disk is full") }
        }

        /// Waits (off the cooperative pool) until the first commit has begun.
        func firstCommitBegan() async {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    self.entered.wait()
                    continuation.resume()
                }
            }
        }

        func open() { gate.signal() }
    }

    /// Runs a task on a thread of its own, so the leader held at the gate blocks no thread of the cooperative pool
    /// (which has as few threads as cores, and other tests run beside this one).
    final class OwnThread: TaskExecutor {
        private let queue = DispatchQueue(label: "TransferRecorderTests.leader")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            queue.async { job.runSynchronously(on: executor) }
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

    /// Saves record 1 on a thread of its own, its commit held at the gate; saves `behind` while it is held; opens the
    /// gate once they all wait. Returns the first save and those behind it.
    static func saveBehindHeldCommit(
        _ recorder: TransferRecorder, _ commits: GatedCommits, behind ids: ClosedRange<Int64>
    ) async throws -> (first: Task<Void, any Error>, behind: [Task<Void, any Error>]) {
        let first = Task(executorPreference: OwnThread()) { try await recorder.save(Self.record(1)) }
        await commits.firstCommitBegan()
        let behind = ids.map { id in Task { try await recorder.save(Self.record(id)) } }
        try await Self.waitUntil(recorder, holds: ids.count)
        commits.open()
        return (first, behind)
    }

    @Test("records that arrive during a commit are written together in the next one, each caller resumed after it")
    func groupsArrivals() async throws {
        let commits = GatedCommits()
        let recorder = TransferRecorder { records throws(DownloadError) in try commits.commit(records) }
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
        let recorder = TransferRecorder { records throws(DownloadError) in try commits.commit(records) }
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
