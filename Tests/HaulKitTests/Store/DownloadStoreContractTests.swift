import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// What every ``DownloadStore`` answers alike, run against SQLite and the in-memory store (``StoreKind``): the cases
/// of ``DownloadStoreTests`` beside the queries, checkpoints and claims those do not cover.
@Suite("Store contract")
struct DownloadStoreContractTests {
    typealias Cases = DownloadStoreTests

    @Test(
        "queries: by id, by URL base, unfinished, completed, counts, ids; each in id order",
        arguments: StoreKind.allCases)
    func queries(kind: StoreKind) async throws {
        // Kept until the test ends: deleted (at its last use, as ARC allows), it would take the database with it.
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        try await Self.expectQueries(kind.make(directory))
    }

    /// The queries' answers on `store`, a store with no records yet (also run on PostgreSQL: ``PostgresStoreTests``).
    static func expectQueries(_ store: any DownloadStore) async throws {
        var added = try await store.insert(
            ["http://a/f", "http://a/f?sig=1", "http://a/fx", "http://a/f", "http://a/g"].map { Cases.queued($0) })
        added[1].state = .completed
        added[3].state = .completed
        try await store.saveLifecycle([added[1], added[3]])
        #expect(try await store.fetchRecords(urlBases: ["http://a/f"]).map(\.id) == [1, 2, 4], "not /fx: no query")
        // Several bases in one read, in id order; one given twice, and one that matches nothing.
        #expect(
            try await store.fetchRecords(urlBases: ["http://a/g", "http://a/f", "http://a/none", "http://a/g"]).map(
                \.id) == [1, 2, 4, 5])
        #expect(try await store.fetchRecords(urlBases: []).isEmpty)
        #expect(try await store.fetch([5, 2, 99, 1]).map(\.id) == [1, 2, 5], "the ones that exist, in id order")
        #expect(try await store.completedIDs() == [2, 4])
        #expect(try await store.unfinishedCount() == 3)
        var unfinished: [Int64?] = []
        try await store.forEachUnfinishedRecord { unfinished.append($0.id) }
        #expect(unfinished == [1, 3, 5])
        var all: [DownloadRecord] = []
        try await store.forEachRecord { all.append($0) }
        #expect(all == added)
        #expect(try await store.fetchIDs() == Set([1, 2, 3, 4, 5].map(DownloadID.init(rawValue:))))
        #expect(try await store.count() == 5)
        try await store.delete([2, 5, 77])
        #expect(try await store.fetchAll().map(\.id) == [1, 3, 4])
        #expect(try await store.insert([]).isEmpty)
        #expect(
            try await store.insert([Cases.queued("http://a/h")]).first?.id == 6, "a deleted id is never given again")
        // URL bases compare byte for byte: a precomposed é is not its decomposed twin, though Swift's strings are equal.
        let precomposed = try #require(try await store.insert([Cases.queued("http://a/caf\u{E9}")]).first?.id)
        #expect(try await store.fetchRecords(urlBases: ["http://a/caf\u{E9}"]).map(\.id) == [precomposed])
        #expect(try await store.fetchRecords(urlBases: ["http://a/cafe\u{301}"]).isEmpty)
    }

    @Test(
        "a checkpoint of another generation writes nothing; segments kept when none are given; distrust clears the boot",
        arguments: StoreKind.allCases)
    func checkpoints(kind: StoreKind) async throws {
        // Kept until the test ends: deleted (at its last use, as ARC allows), it would take the database with it.
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let store = try kind.make(directory)
        var record = try #require(try await store.insert([Cases.queued("http://a/big")]).first)
        let id = record.downloadID
        record.transfer.generation = 3
        try await store.saveTransfers([record])
        #expect(try await store.checkpoint(id, generation: 2, durableBytes: 10, segments: nil, bootID: "b") == false)
        #expect(try await store.fetch(id) == record, "an older generation's checkpoint changes nothing")
        let plan = [Segment(id: 0, start: 0, end: 50, written: 20), Segment(id: 1, start: 50, end: 99, written: 5)]
        let before = Date()
        #expect(try await store.checkpoint(id, generation: 3, durableBytes: 25, segments: plan, bootID: "b"))
        #expect(try await store.checkpoint(id, generation: 3, durableBytes: 30, segments: nil, bootID: "c"))
        let stored = try #require(try await store.fetch(id))
        #expect(stored.transfer.durableBytes == 30 && stored.transfer.bootID == "c")
        #expect(stored.transfer.segments == plan, "a checkpoint without a plan keeps the last one")
        #expect(stored.updatedAt >= before.addingTimeInterval(-0.001), "a checkpoint is a change")
        try await store.distrustUnsyncedBytes(id)
        let distrusted = try #require(try await store.fetch(id))
        #expect(distrusted.transfer.bootID == nil && distrusted.transfer.durableBytes == 30)
        #expect(distrusted.updatedAt == stored.updatedAt)
        #expect(try await store.checkpoint(99, generation: 0, durableBytes: 1, segments: nil, bootID: nil) == false)
    }

    @Test("recording running starts only what is still queued, with its start time", arguments: StoreKind.allCases)
    func recordRunning(kind: StoreKind) async throws {
        // Kept until the test ends: deleted (at its last use, as ARC allows), it would take the database with it.
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let store = try kind.make(directory)
        var records = try await store.insert([Cases.queued("http://a/1"), Cases.queued("http://a/2")])
        records[1].state = .paused
        try await store.saveLifecycle([records[1]])
        let started = Cases.date.addingTimeInterval(60)
        for index in records.indices { records[index].startedAt = started }
        let before = Date()
        try await store.recordRunning(records)
        let first = try #require(try await store.fetch(records[0].downloadID))
        #expect(first.state == .running && first.startedAt == started)
        #expect(first.updatedAt >= before.addingTimeInterval(-0.001))
        let second = try #require(try await store.fetch(records[1].downloadID))
        #expect(second.state == .paused && second.startedAt == nil, "a pause written since is kept")
    }

    @Test(
        "claims: refused while another handle holds one or when it is no longer queued or running; they end with it",
        arguments: StoreKind.allCases)
    func claims(kind: StoreKind) async throws {
        var handles = try await Self.twoHandles(kind, queued: 3)
        let mine = handles.mine
        var other = handles.other
        handles.other = nil  // The only reference is `other`: set to nil below, the handle goes away.
        let share = HostShare(host: "a", wanted: 4, limit: 2)
        var added = handles.added
        added[2].state = .paused
        try await mine.saveLifecycle([added[2]])
        #expect(await mine.claim(1, share: share) == .granted(connections: 2), "at most the host's limit")
        #expect(await mine.claim(1, share: share) == .granted(connections: 2), "claimed again by its holder")
        #expect(await mine.widenClaim(1, share: HostShare(host: "a", wanted: 9, limit: 8)) == 8)
        #expect(await mine.claim(3, share: share) == .refused, "paused")
        #expect(await mine.claim(9, share: share) == .refused, "no such download")
        #expect(await other?.claim(1, share: share) == .refused)
        #expect(await other?.claim(2, share: HostShare(host: "a", wanted: 1, limit: 8)) == .granted(connections: 1))
        #expect(await mine.claimedElsewhere([2, 3]) == [2])
        #expect(await other?.claimedElsewhere([1, 3]) == [1])
        #expect(await mine.lostClaims().isEmpty, "never lost: a claim ends only with its holder")
        #expect(try await mine.claimHolders().isEmpty, "anonymous")
        await mine.release(1)
        #expect(await other?.claimedElsewhere([1]) == [])
        // The other handle goes away (a process that died): its claims end with it.
        other = nil
        #expect(await mine.claimedElsewhere([2]) == [])
        #expect(await mine.claim(2, share: share) == .granted(connections: 2))
        try await mine.probe()
    }

    @Test(
        "asked whether a download it holds is claimed elsewhere, a store answers no and keeps its claim",
        arguments: StoreKind.allCases)
    func ownClaimSurvivesTheQuestion(kind: StoreKind) async throws {
        let handles = try await Self.twoHandles(kind, queued: 1)
        let mine = handles.mine
        let other = try #require(handles.other)
        let share = HostShare(host: "a", wanted: 1, limit: 8)
        #expect(await mine.claim(1, share: share) == .granted(connections: 1))
        // The manager asks so for the downloads added again (`haul add` of a URL it is running).
        #expect(await mine.claimedElsewhere([1]) == [])
        #expect(await other.claim(1, share: share) == .refused, "still held: no second process may run it")
        #expect(await other.claimedElsewhere([1]) == [1])
        await mine.release(1)
        #expect(await other.claim(1, share: share) == .granted(connections: 1))
    }

    @Test(
        "claims made together answer each as it would alone, in order; a refused one's lock is not kept",
        arguments: StoreKind.allCases)
    func claimsTogether(kind: StoreKind) async throws {
        // More than one statement's worth of ids (SQLite reads their states 500 at a time).
        let handles = try await Self.twoHandles(kind, queued: 620)
        let mine = handles.mine
        let other = try #require(handles.other)
        var paused = handles.added[2]
        paused.state = .paused
        try await mine.saveLifecycle([paused])
        let share = HostShare(host: "a", wanted: 3, limit: 2)
        #expect(await other.claim(2, share: share) == .granted(connections: 2))
        let asked: [DownloadID] = [1, 2, 3, 999] + (4...620).map(DownloadID.init(rawValue:))
        let outcomes = await mine.claim(asked.map { ($0, share) }, viewToken: nil)
        #expect(outcomes.count == asked.count)
        #expect(Array(outcomes.prefix(4)) == [.granted(connections: 2), .refused, .refused, .refused])
        #expect(outcomes.dropFirst(4).allSatisfy { $0 == .granted(connections: 2) })
        #expect(await other.claimedElsewhere([1, 3, 620]) == [1, 620], "held by the one that claimed them")
        #expect(await other.claim(3, share: share) == .refused, "paused, whoever asks")
        #expect(await mine.claim([], viewToken: nil).isEmpty)
    }

    /// A store in a new directory with `count` queued downloads (ids 1…count), and a second handle on the same
    /// records, as another process has.
    private static func twoHandles(
        _ kind: StoreKind, queued count: Int
    ) async throws -> (
        directory: TemporaryDirectory, mine: any DownloadStore, other: (any DownloadStore)?, added: [DownloadRecord]
    ) {
        let directory = TemporaryDirectory()
        let mine = try kind.make(directory)
        let other = try kind.another(mine, in: directory)
        let added = try await mine.insert((1...count).map { Cases.queued("http://a/\($0)") })
        return (directory, mine, other, added)
    }
}
