import Foundation
import GRDB
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("State database")
struct DownloadStoreTests {
    /// Dates in whole seconds: the database keeps milliseconds, which a binary `Double` cannot always round-trip.
    static let date = Date(timeIntervalSince1970: 1_700_000_000)

    static func queued(_ url: String, options: DownloadOptions = .init()) -> DownloadRecord {
        DownloadRecord(
            url: url, requestedDestination: .directory(URL(fileURLWithPath: "/downloads")), options: options,
            state: .queued, createdAt: date, updatedAt: date)
    }

    static func everyColumnSet() throws -> DownloadRecord {
        let options = DownloadOptions(
            checksum: try Checksum(.sha256, hex: String(repeating: "ab", count: 32)),
            headers: [HTTPHeaderField(name: "Authorization", value: "Bearer x")], priority: 3, speedLimit: 1_000,
            metadata: ["title": "Big"], onResourceChange: .fail, connections: 4)
        var record = DownloadRecord(
            url: "https://example.com/a.iso", requestedDestination: .file(URL(fileURLWithPath: "/d/a.iso")),
            destinationPath: "/d/a.iso", options: options, state: .failed, createdAt: date,
            updatedAt: date.addingTimeInterval(5))
        record.startedAt = date.addingTimeInterval(1)
        record.completedAt = date.addingTimeInterval(2)
        record.lastError = .httpStatus(503, reason: "Service Unavailable", url: "https://example.com/a.iso")
        record.transfer.hasPartData = true
        record.transfer.generation = 2
        record.transfer.durableBytes = 4_096
        record.transfer.bootID = "boot"
        record.transfer.etag = "\"e\""
        record.transfer.lastModified = "Tue, 14 Nov 2023 22:13:20 GMT"
        record.transfer.totalBytes = 10_000
        record.transfer.contentEncoding = "gzip"
        record.transfer.finalURL = "https://mirror.example.com/a.iso"
        record.transfer.finalizing = true
        record.transfer.segments = [
            Segment(id: 0, start: 0, end: 5_000, written: 4_096), Segment(id: 1, start: 5_000, end: 10_000, written: 0),
        ]
        record.owner = "haul get|host|boot|4711|123"
        record.fingerprint = FileFingerprint(
            size: 10_000, modified: 1_700_000_000_123_456_789, identity: "2049:77",
            sha256: String(repeating: "c", count: 64))
        return record
    }

    /// `records` with job columns that differ from record to record (present or not, each kind of value), as a
    /// batched write must keep them apart.
    static func variedTransfers(_ records: ArraySlice<DownloadRecord>) -> [DownloadRecord] {
        var transfers = Array(records)
        for index in transfers.indices {
            transfers[index].destinationPath = "/d/\(index)"
            transfers[index].transfer.durableBytes = Int64(index)
            transfers[index].transfer.totalBytes = index % 3 == 0 ? nil : Int64(index * 10)
            transfers[index].transfer.etag = index % 2 == 0 ? "\"\(index)\"" : nil
            transfers[index].transfer.hasPartData = index % 5 == 0
            transfers[index].updatedAt = date.addingTimeInterval(Double(index))
            if index == 70 { transfers[index].transfer.segments = [Segment(id: 0, start: 0, end: 9, written: 4)] }
        }
        return transfers
    }

    /// Writes one record's life-cycle columns and another's transfer columns in one call; checks each got only its own.
    static func expectLifecycleAndTransfers(_ store: any DownloadStore) async throws {
        let written = try await store.insert([queued("http://a/finished"), queued("http://a/next")])
        var finished = written[0]
        finished.state = .completed
        finished.completedAt = date.addingTimeInterval(3)
        finished.updatedAt = date.addingTimeInterval(3)
        finished.transfer.durableBytes = 99  // not a life-cycle column
        var next = written[1]
        next.destinationPath = "/d/next"
        next.transfer.hasPartData = true
        next.transfer.totalBytes = 10
        next.transfer.etag = "\"n\""
        next.state = .completed  // not a transfer column
        try await store.saveLifecycleAndTransfers(lifecycle: [finished], transfers: [next])
        let first = try #require(try await store.fetch(finished.downloadID))
        #expect(first.state == .completed && first.completedAt == finished.completedAt)
        #expect(first.transfer == written[0].transfer)
        let second = try #require(try await store.fetch(next.downloadID))
        #expect(second.transfer == next.transfer && second.destinationPath == "/d/next")
        #expect(second.state == .queued)
    }

    /// A checkpoint records its bytes until the finishing group marks the record finalizing; one that lands after
    /// (its sync was slow) writes nothing: not its bytes, not its change time. `claim` readies the record for
    /// checkpoints (a shared queue's lease).
    static func expectCheckpointSparesFinalizing(
        _ store: any DownloadStore, claim: (DownloadID) async -> Void = { _ in }
    ) async throws {
        var record = try #require(try await store.insert([queued("http://a/big")]).first)
        let id = record.downloadID
        await claim(id)
        #expect(try await store.checkpoint(id, generation: 0, durableBytes: 100, segments: nil, bootID: "b"))
        record = try #require(try await store.fetch(id))
        record.transfer.durableBytes = 300
        record.transfer.finalizing = true
        record.updatedAt = date.addingTimeInterval(5)
        try await store.saveTransfers([record])
        #expect(try await store.checkpoint(id, generation: 0, durableBytes: 200, segments: nil, bootID: "b") == false)
        let stored = try #require(try await store.fetch(id))
        #expect(stored.transfer.durableBytes == 300 && stored.transfer.finalizing)
        #expect(stored.updatedAt == record.updatedAt)
    }

    @Test("a checkpoint never writes over a record the finishing group has taken", arguments: StoreKind.allCases)
    func checkpointSparesFinalizing(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        try await Self.expectCheckpointSparesFinalizing(try kind.make(directory))
    }

    @Test(
        "one transaction records a group completed and the next group's transfers, each with only its columns",
        arguments: StoreKind.allCases)
    func lifecycleAndTransfers(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        try await Self.expectLifecycleAndTransfers(try kind.make(directory))
    }

    @Test(
        "records read back exactly as written, every column, shared options and destinations decoded once per text",
        arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(directory)
        // Options and destinations alternate, then repeat: each is decoded, found again, then taken as the last one.
        let written = try await store.insert(
            [
                Self.queued("http://a/1"), try Self.everyColumnSet(),
                Self.queued("http://a/2", options: .init(priority: 7)), Self.queued("http://a/3"),
            ])
        #expect(written.map(\.id) == [1, 2, 3, 4])
        #expect(try await store.fetchAll() == written)
        #expect(try await store.fetch(written[1].downloadID) == written[1])
        #expect(try await store.fetchUpdated(since: Self.date.addingTimeInterval(1)) == [written[1]])
        #expect(try await store.fetch(99) == nil)
    }

    @Test(
        "records that never ran or failed keep nothing of their own out of line: one empty transfer, no error box",
        arguments: StoreKind.allCases)
    func sparseRecords(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(directory)
        _ = try await store.insert([Self.queued("http://a/1"), try Self.everyColumnSet(), Self.queued("http://a/2")])
        let read = try await store.fetchAll()
        #expect(read[0].storedTransfer.isShared(with: read[2].storedTransfer))
        #expect(!read[0].storedTransfer.isShared(with: read[1].storedTransfer))
        #expect(read[0].storedError == nil && read[1].storedError != nil)

        // Columns set and cleared again leave no box behind.
        var record = read[0]
        record.errorColumns = .init(summary: "down", httpStatus: 503)
        #expect(record.lastError == nil, "no code: not an error yet")
        record.errorColumns?.code = DownloadError.Code.serverError.rawValue
        #expect(record.lastError?.httpStatus == 503 && record.lastError?.summary == "down")
        record.errorColumns = .init()
        #expect(record.storedError == nil && record == read[0])
        record.lastError = read[1].lastError
        #expect(record.lastError == read[1].lastError)
        record.lastError = nil
        #expect(record.storedError == nil)
    }

    @Test("dates are stored as the same text GRDB writes and read back as GRDB reads them, without a formatter")
    func dateText() throws {
        var generator = SystemRandomNumberGenerator()
        let samples =
            [
                0, -1, 951_782_400.5, 1_709_164_800.999, 4_102_444_799.123, -2_208_988_800.25, 1_700_000_000.0004,
                1_700_000_000.0006, 1_700_000_000.9996,
            ]
            + (0..<500).map { _ in
                Double(Int64.random(in: -3_000_000_000_000...7_000_000_000_000, using: &generator)) / 1000
            }
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            let text = DownloadRecordEncoder.text(date)
            #expect(text == String.fromDatabaseValue(date.databaseValue), "\(seconds)")
            // Read back directly as GRDB reads it, to the millisecond.
            let read = Array(text.utf8).withUnsafeBytes(DownloadRecordDecoder.storedDate)
            let grdb = try #require(Date.fromDatabaseValue(text.databaseValue))
            let difference = try #require(read).timeIntervalSince(grdb)
            #expect(abs(difference) < 0.000_001, "\(text): \(difference)")
        }
        for text in ["2024-02-30 10:00:00.000x", "2024-13-01 10:00:00.000", "2024-01-01T10:00:00.000", "2024-01-01"] {
            #expect(Array(text.utf8).withUnsafeBytes(DownloadRecordDecoder.storedDate) == nil, "\(text)")
        }
    }

    @Test(
        "a claim trusts the caller's view only while no other connection committed since its token",
        arguments: StoreKind.allCases)
    func claimWithView(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        let mine = try kind.make(directory)
        let other = try kind.another(mine, in: directory)
        let share = HostShare(host: "a", wanted: 1, limit: 8)
        let added = try await mine.insert([Self.queued("http://a/1"), Self.queued("http://a/2")])
        let view = try await mine.changeToken()
        var own = added[0]
        own.updatedAt = Self.date.addingTimeInterval(5)
        try await mine.saveLifecycle([own])
        #expect(try await mine.changeToken() == view, "this connection's own commits keep its view current")

        // Another process finished download 2 after the view was taken: the claim reads, and refuses.
        var finished = added[1]
        finished.state = .completed
        try await other.saveLifecycle([finished])
        #expect(try await mine.changeToken() != view)
        #expect(await mine.claim(added[1].downloadID, share: share, viewToken: view) == .refused)
        #expect(await mine.claim(added[0].downloadID, share: share, viewToken: view) == .granted(connections: 1))
        await mine.release(added[0].downloadID)
        #expect(await other.claim(added[0].downloadID, share: share) == .granted(connections: 1), "released")
        #expect(await mine.claim(added[0].downloadID, share: share) == .refused, "held by the other connection")
    }

    @Test(
        "batch writes: states of many records in one call, deletes beyond SQLite's parameter limit",
        arguments: StoreKind.allCases)
    func batches(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(directory)
        var records = try await store.insert((0..<1_200).map { Self.queued("http://a/\($0)") })
        for index in records.indices {
            records[index].state = index % 3 == 0 ? .failed : .paused
            records[index].updatedAt = Self.date.addingTimeInterval(Double(index))
            if index % 3 == 0 { records[index].lastError = .networkFailure("reset \(index)") }
        }
        records[7] = try Self.everyColumnSet()
        records[7].id = 8
        try await store.saveLifecycle(records)
        // The manager's columns changed; record 8's job columns did not.
        var expected = records
        expected[7] = try Self.everyColumnSet().with(jobColumnsOf: Self.queued("http://a/7"))
        expected[7].id = 8
        #expect(try await store.fetchAll() == expected)
        try await store.delete(records.prefix(1_100).map(\.downloadID))
        #expect(try await store.fetchAll() == Array(expected.suffix(100)))
        var changed = expected[1_150]
        changed.options.speedLimit = 2_048
        changed.updatedAt = Self.date.addingTimeInterval(-1)
        try await store.saveSettings(changed)
        #expect(try await store.fetch(changed.downloadID) == changed)
    }

    @Test(
        "batched inserts: consecutive ids as SQLite gives them, never one used before, every record read back",
        arguments: StoreKind.allCases)
    func batchedInserts(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(directory)
        let first = try await store.insert((0..<3).map { Self.queued("http://a/\($0)") })
        #expect(first.map(\.id) == [1, 2, 3])
        try await store.delete([first[2].downloadID])
        // 1 that SQLite numbers, then batches of 64, 16 and 4, then two alone; the deleted id 3 is not used again.
        var records = (0..<87).map { Self.queued("http://b/\($0)") }
        records[40] = try Self.everyColumnSet()
        let inserted = try await store.insert(records)
        #expect(inserted.map(\.id) == (4...90).map { Int64($0) })
        #expect(try await store.fetchAll() == Array(first.prefix(2)) + inserted)
        #expect(try await store.insert([Self.queued("http://c")]).first?.id == 91)
    }

    @Test(
        "batched writes: every size of batch and the rest one by one, each record its own values; the last of an id wins",
        arguments: [(StoreKind.sqlite, true), (.sqlite, false), (.memory, true)]
    )
    func batchSizesAndRepeatedIDs(kind: StoreKind, batched: Bool) async throws {
        let directory = TemporaryDirectory()
        // Batched, and one record per statement (an SQLite older than 3.33).
        let store = try kind.make(directory, batchesUpdates: batched)
        // 64 + 16 + 4 + 3: each batched statement once, then three records alone; record 88 is not written.
        let added = try await store.insert((0..<88).map { Self.queued("http://a/\($0)") })
        let transfers = Self.variedTransfers(added.prefix(87))
        try await store.saveTransfers(transfers)
        #expect(try await store.fetchAll() == transfers + [added[87]])

        // The same id twice in one call: written one by one, the last won; batched, it still does.
        var paused = transfers[1]
        paused.state = .paused
        var completed = transfers[1]
        completed.state = .completed
        completed.completedAt = Self.date.addingTimeInterval(9)
        var others = Array(transfers[2..<20])
        for index in others.indices { others[index].state = .failed }
        // Both in the first batch of 16.
        try await store.saveLifecycle([paused] + others.prefix(5) + [completed] + others.dropFirst(5))
        #expect(try await store.fetch(completed.downloadID) == completed)
        #expect(try await store.fetch(others[5].downloadID)?.state == .failed)
        #expect(try await store.fetch(transfers[0].downloadID) == transfers[0])
    }
}

extension DownloadRecord {
    /// This record's life-cycle columns over `other`: what a life-cycle write leaves.
    func with(jobColumnsOf other: DownloadRecord) -> DownloadRecord {
        var record = other
        record.state = state
        record.updatedAt = updatedAt
        record.startedAt = startedAt
        record.completedAt = completedAt
        record.lastError = lastError
        record.owner = owner
        record.fingerprint = fingerprint
        return record
    }
}
