import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// A manager that keeps its history on disk (`keepsHistoryInMemory` false) reads only the unfinished downloads when
/// it opens, and answers every query as if the completed ones were there too.
@Suite("History on disk")
struct HistoryOnDiskTests {
    /// A state with `count` completed downloads of `/c0.bin`… and one queued download (paused) of `/queued.bin`.
    static func history(_ count: Int) async throws -> (Harness, [DownloadID], DownloadID) {
        let harness = try await Harness.make()
        var ids: [DownloadID] = []
        for index in 0..<count {
            ids.append(try await harness.manager.add(harness.origin.serve("/c\(index).bin", size: 1_000 + index)))
        }
        for id in ids { _ = try await harness.manager.wait(for: id) }
        let queued = try await harness.manager.add(harness.origin.serve("/queued.bin", size: 10), paused: true)
        return (harness, ids, queued)
    }

    @Test("only the unfinished downloads are read at start; queries see the completed ones from the store")
    func queries() async throws {
        let (harness, ids, queued) = try await Self.history(6)
        let reopened = try await harness.reopen { $0.keepsHistoryInMemory = false }
        await harness.manager.shutdown()
        let manager = reopened.manager
        #expect(await manager.records.count == 1, "only the queued download is in memory")
        #expect(await manager.ids(in: [.completed]) == ids)
        #expect(await manager.ids(in: Set(DownloadState.allCases)) == ids + [queued])
        #expect(await manager.count(in: [.completed, .paused]) == 7)
        #expect(await manager.snapshot(ids[2])?.state == .completed)
        #expect(await manager.state(of: ids[3]) == .completed)
        #expect(await manager.snapshots(in: [.completed]).map(\.id) == ids)
        #expect(await manager.snapshots(of: [queued, ids[0]]).map(\.id) == [queued, ids[0]])
        #expect(await manager.ids(in: [.completed], order: .finished).count == 6)
        #expect(try await manager.wait(for: ids[1]).lastPathComponent == "c1.bin")
        #expect(await manager.records.count == 2, "what was asked for by id is read; the rest stays on disk")
        await reopened.shutdown()
    }

    @Test("completed URLs added again are found on disk, alone or in a batch: already complete, nothing fetched")
    func addedAgain() async throws {
        let (harness, ids, _) = try await Self.history(3)
        let reopened = try await harness.reopen { $0.keepsHistoryInMemory = false }
        await harness.manager.shutdown()
        let requests = reopened.origin.requests(to: "/c1.bin").count
        let again = try await reopened.manager.add(reopened.origin.url("/c1.bin"))
        #expect(again == ids[1])
        #expect(await reopened.manager.state(of: again) == .completed)
        #expect(reopened.origin.requests(to: "/c1.bin").count == requests)
        // A batch of them (one read of the store for all): the completed ones found, a signed URL as its unsigned
        // one, a new one added.
        let batch = try await reopened.manager.add(
            contentsOf: [
                (reopened.origin.url("/c0.bin"), nil, .init()),
                (URL(string: reopened.origin.url("/c2.bin").absoluteString + "?X-Amz-Signature=abc")!, nil, .init()),
                (reopened.origin.serve("/fresh.bin", size: 10), nil, .init()),
            ])
        #expect(Array(batch.prefix(2)) == [ids[0], ids[2]])
        #expect(!ids.contains(batch[2]))
        #expect(await reopened.manager.state(of: ids[0]) == .completed)
        try await reopened.manager.remove(ids[2])
        #expect(await reopened.manager.state(of: ids[2]) == nil)
        #expect(await reopened.manager.ids(in: [.completed]) == [ids[0], ids[1]])
        await reopened.shutdown()
    }
}
