import Foundation

/// Where downloads are recorded: the only way the manager, its jobs and the finishing queue reach persistence.
///
/// ``SQLiteDownloadStore`` (the embedded default) implements it over one SQLite file; a shared-queue backend is a new
/// conforming type. Every call is one transaction and is asynchronous: a caller suspends while the store's I/O runs
/// where the store runs it (SQLite on GRDB's writer and reader queues, PostgreSQL on postgres-nio's event loops; see
/// "Where blocking I/O runs" in docs/architecture.md), never blocking a cooperative thread or the caller's actor.
///
/// Writers never overlap: the manager writes the life-cycle and settings columns, the running job its transfer
/// columns (``DownloadColumn/Owner``). A download runs only where it is *claimed*: the claim is what keeps two
/// processes (or two machines) from running one download, and it must end by itself when its holder dies.
package protocol DownloadStore: AnyObject, Sendable {
    /// Where the records are, for messages.
    var location: String { get }

    // MARK: Reading

    /// Every record, oldest first. A row that cannot be read comes back as a damaged record, never as an error.
    nonisolated(nonsending) func fetchAll() async throws(DownloadError) -> [DownloadRecord]
    /// Hands every record to `body`, oldest first, without holding them all at once (a queue of 100,000 is read at
    /// start-up). A row that cannot be read comes as a damaged record.
    nonisolated(nonsending) func forEachRecord(_ body: (DownloadRecord) -> Void) async throws(DownloadError)
    /// Hands every record that is not `completed` to `body`, oldest first: the queue and what can still change, not
    /// the history of finished downloads (read on demand).
    nonisolated(nonsending) func forEachUnfinishedRecord(_ body: (DownloadRecord) -> Void) async throws(DownloadError)
    /// How many records are not `completed`.
    nonisolated(nonsending) func unfinishedCount() async throws(DownloadError) -> Int
    /// The ids of the `completed` records, oldest first.
    nonisolated(nonsending) func completedIDs() async throws(DownloadError) -> [DownloadID]
    /// The records of `ids` that exist, in id order.
    nonisolated(nonsending) func fetch(_ ids: [DownloadID]) async throws(DownloadError) -> [DownloadRecord]
    /// The records whose URL is one of `bases` or one of them followed by a query (`base?…`), in id order: the
    /// candidates when downloads are asked for again (``ResourceKey``). One read for them all, however many.
    nonisolated(nonsending) func fetchRecords(urlBases bases: [String]) async throws(DownloadError) -> [DownloadRecord]
    /// One record, or nil if there is none with that id.
    nonisolated(nonsending) func fetch(_ id: DownloadID) async throws(DownloadError) -> DownloadRecord?
    /// Records changed at or after `date` (by any writer).
    nonisolated(nonsending) func fetchUpdated(since date: Date) async throws(DownloadError) -> [DownloadRecord]
    /// The identifiers of all records.
    nonisolated(nonsending) func fetchIDs() async throws(DownloadError) -> Set<DownloadID>
    /// How many records there are.
    nonisolated(nonsending) func count() async throws(DownloadError) -> Int
    /// A number that changes whenever another writer (another process, say) commits a change.
    nonisolated(nonsending) func changeToken() async throws(DownloadError) -> Int

    // MARK: Writing

    /// Inserts new records in one transaction and returns them with their identifiers (set in place: a batch of
    /// 100,000 given up by its caller is not copied).
    nonisolated(nonsending) func insert(
        _ records: consuming [DownloadRecord]
    ) async throws(DownloadError) -> [DownloadRecord]
    /// Writes the manager's life-cycle columns of several records in one transaction.
    nonisolated(nonsending) func saveLifecycle(_ records: [DownloadRecord]) async throws(DownloadError)
    /// Records downloads as running (with their start time), but only those still `queued`: a pause or removal
    /// written by another process since is kept.
    nonisolated(nonsending) func recordRunning(_ records: [DownloadRecord]) async throws(DownloadError)
    /// Writes the options of `record` (changed after it was added).
    nonisolated(nonsending) func saveSettings(_ record: DownloadRecord) async throws(DownloadError)
    /// Writes the job's columns of several records (with their destination paths) in one transaction.
    nonisolated(nonsending) func saveTransfers(_ records: [DownloadRecord]) async throws(DownloadError)
    /// Writes, in one transaction, the life-cycle columns of `lifecycle` and the job's columns of `transfers` (the
    /// finishing queue: one group recorded completed together with the next group's files).
    nonisolated(nonsending) func saveLifecycleAndTransfers(
        lifecycle: [DownloadRecord], transfers: [DownloadRecord]) async throws(DownloadError)
    /// Records that `durableBytes` (and, with `segments`, each segment's bytes) are synced, unless the part file was
    /// cut back since (another `generation`) or the finishing group has taken the record (`finalizing`: a checkpoint
    /// that was still syncing when the download finished never writes over it); returns whether it was recorded.
    @discardableResult
    nonisolated(nonsending) func checkpoint(
        _ id: DownloadID, generation: Int64, durableBytes: Int64, segments: [Segment]?, bootID: String?
    ) async throws(DownloadError) -> Bool
    /// Forgets the boot the part file was written in, so the next run trusts only the bytes the last checkpoint
    /// recorded as synced.
    nonisolated(nonsending) func distrustUnsyncedBytes(_ id: DownloadID) async throws(DownloadError)
    /// Deletes records in one transaction.
    nonisolated(nonsending) func delete(_ ids: [DownloadID]) async throws(DownloadError)
    /// Checks that the store is reachable and takes writes now (a daemon's `/readyz`): opens a write transaction and
    /// rolls it back, changing nothing. A networked store connects again first if its connection was lost. Throws
    /// why not.
    nonisolated(nonsending) func probe() async throws(DownloadError)

    // MARK: Claiming

    /// Claims a download to run it here, without waiting. Refused if a live owner elsewhere holds it, or if the store
    /// no longer records it `queued` or `running` (another owner finished, paused or removed it meanwhile). A store
    /// shared by several workers also holds `share`'s per-host limit across all of them: it grants at most the
    /// connections the host has left, and answers ``ClaimOutcome/hostBusy`` when it has none.
    ///
    /// `viewToken` is the ``changeToken()`` as of which the caller's view of the download is complete: while it is
    /// still the token, no other writer changed anything since, and the store need not read the state again.
    nonisolated(nonsending) func claim(_ id: DownloadID, share: HostShare, viewToken: Int?) async -> ClaimOutcome
    /// Whether ``claim(_:viewToken:)`` of several downloads costs less than a claim of each: a store across a network
    /// answers them in one round trip, and the manager then gathers the downloads it starts together.
    var claimsTogether: Bool { get }
    /// Whether a download may be claimed before it starts, while it waits next in the queue (``DownloadManager``
    /// claims the next ones with the starts, in the same call): true where a claim holds only the download (SQLite's
    /// lock), false (the default) where it also takes a share of its host's connections (the fleet's).
    var claimsAhead: Bool { get }
    /// The directory of the database's files on this machine, whose file system downloads keep room on (see
    /// ``FreeSpacePolicy``); nil where there is none (a shared database elsewhere, or memory).
    var stateDirectory: String? { get }
    /// Where the fleet keeps its hosts' request schedules and backoff; nil (the default) for a store of one process.
    var sharedHostBudget: (any SharedHostBudget)? { get }
    /// Claims several downloads in order, each as ``claim(_:share:viewToken:)`` would (a later one sees the host's
    /// connections the earlier ones took), and returns their outcomes in the same order.
    nonisolated(nonsending) func claim(
        _ requests: [(id: DownloadID, share: HostShare)], viewToken: Int?
    ) async -> [ClaimOutcome]
    /// Asks for more of the host's connections for a download this owner holds (to split it): returns how many it
    /// may open now, at least 1 and at most `share.wanted`. The share is kept until the claim is released.
    nonisolated(nonsending) func widenClaim(_ id: DownloadID, share: HostShare) async -> Int
    /// These downloads, which this owner holds, use no connection now (their bodies have arrived and their files are
    /// being finished): a store that holds host limits across workers gives their share of the host back, and keeps
    /// the claims.
    nonisolated(nonsending) func connectionsDone(_ ids: [DownloadID]) async
    /// Gives up a claim this owner holds.
    nonisolated(nonsending) func release(_ id: DownloadID) async
    /// Those of `ids` that a live owner elsewhere holds (one query). Ask only for downloads this owner does not hold.
    nonisolated(nonsending) func claimedElsewhere(_ ids: [DownloadID]) async -> Set<DownloadID>
    /// The claims this owner lost since the last call (a shared queue's lease that ran out, and another worker
    /// took); a claim that ends only with its owner is never lost.
    nonisolated(nonsending) func lostClaims() async -> Set<DownloadID>
    /// Who holds each live claim, where owners have names (a shared queue's workers); empty where claims are
    /// anonymous (SQLite's locks).
    nonisolated(nonsending) func claimHolders() async throws(DownloadError) -> [DownloadID: String]

    // MARK: Events

    /// From now on, records in the outbox each state change this process writes that one of `targets` takes (a
    /// download started, paused, completed, failed or removed before it finished), in the transaction of the change,
    /// and returns the outbox to deliver them from. Called once, before anything is written; without it, nothing is
    /// recorded and a state change costs nothing more.
    nonisolated(nonsending) func enableOutbox(for targets: [EventTarget]) async throws(DownloadError) -> any EventOutbox
}

/// The connections a claim asks for on its download's host, and how many that host may have in all.
package struct HostShare: Equatable, Sendable {
    /// The host, lowercased (the port does not matter).
    package var host: String
    /// The connections the download would open (at least 1).
    package var wanted: Int
    /// The most connections to ``host`` at once, over every download (and, in a shared queue, every worker).
    package var limit: Int
}

/// What a claim got.
package enum ClaimOutcome: Equatable, Sendable {
    /// This owner holds the download now, and may open `connections` connections to its host.
    case granted(connections: Int)
    /// Another live owner holds it, or it is no longer queued or running.
    case refused
    /// The host's connections are all taken (by other workers' downloads): try again once one is released.
    case hostBusy
}

extension DownloadStore {
    package var claimsTogether: Bool { false }
    package var claimsAhead: Bool { false }
    package var stateDirectory: String? { nil }
    package var sharedHostBudget: (any SharedHostBudget)? { nil }

    package nonisolated(nonsending) func connectionsDone(_ ids: [DownloadID]) async {}

    package nonisolated(nonsending) func claim(
        _ requests: [(id: DownloadID, share: HostShare)], viewToken: Int?
    ) async -> [ClaimOutcome] {
        var outcomes: [ClaimOutcome] = []
        for request in requests { outcomes.append(await claim(request.id, share: request.share, viewToken: viewToken)) }
        return outcomes
    }

    /// ``claim(_:share:viewToken:)`` with no view to trust: the state is read again.
    nonisolated(nonsending) func claim(_ id: DownloadID, share: HostShare) async -> ClaimOutcome {
        await claim(id, share: share, viewToken: nil)
    }

    package nonisolated(nonsending) func forEachRecord(_ body: (DownloadRecord) -> Void) async throws(DownloadError) {
        for record in try await fetchAll() { body(record) }
    }

    package nonisolated(nonsending) func forEachUnfinishedRecord(
        _ body: (DownloadRecord) -> Void
    ) async throws(DownloadError) {
        try await forEachRecord { if $0.state != .completed { body($0) } }
    }

    package nonisolated(nonsending) func unfinishedCount() async throws(DownloadError) -> Int {
        var count = 0
        try await forEachUnfinishedRecord { _ in count += 1 }
        return count
    }

    package nonisolated(nonsending) func completedIDs() async throws(DownloadError) -> [DownloadID] {
        try await fetchAll().filter { $0.state == .completed }.map(\.downloadID)
    }

    package nonisolated(nonsending) func fetch(_ ids: [DownloadID]) async throws(DownloadError) -> [DownloadRecord] {
        var records: [DownloadRecord] = []
        for id in ids.sorted() { if let record = try await fetch(id) { records.append(record) } }
        return records
    }

    package nonisolated(nonsending) func fetchRecords(
        urlBases bases: [String]
    ) async throws(DownloadError) -> [DownloadRecord] {
        let wanted = Set(bases)
        return try await fetchAll().filter { wanted.contains(URLBase.of($0.url)) }
    }

    /// True if a live owner elsewhere holds the claim of `id`.
    nonisolated(nonsending) func isClaimedElsewhere(_ id: DownloadID) async -> Bool {
        await claimedElsewhere([id]).contains(id)
    }

    /// Writes the manager's life-cycle columns of `record`.
    nonisolated(nonsending) func saveLifecycle(_ record: DownloadRecord) async throws(DownloadError) {
        try await saveLifecycle([record])
    }

    /// Writes the job's columns of `record`.
    nonisolated(nonsending) func saveTransfer(_ record: DownloadRecord) async throws(DownloadError) {
        try await saveTransfers([record])
    }
}
