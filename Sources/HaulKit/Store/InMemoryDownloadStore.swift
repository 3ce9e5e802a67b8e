import Foundation

/// A ``DownloadStore`` that keeps its records in memory only: the store of ``DownloadStoreFactory/inMemory`` (an app's
/// downloads that need no state file) and of the manager's unit tests.
///
/// It answers as ``SQLiteDownloadStore`` does, call for call: ids as SQLite's `AUTOINCREMENT` gives them, each writer
/// its own columns, dates to the millisecond, the change token, checkpoints that spare a finalizing record, claims
/// and the event outbox (``InMemoryEventOutbox``); a contract test runs the same cases against both. Records are
/// kept as their stored values (``DownloadRecordEncoder``) and read back through ``DownloadRecordDecoder``, so what
/// reads back is what SQLite would give.
///
/// Several handles on one database (``init(sharingRecordsOf:)``) stand for several processes on one SQLite file:
/// each has its own claims (refused to the others while held, ended when the handle is gone, never lost otherwise),
/// its own change token (moved only by the others' commits) and its own event targets. A host's connection limit is
/// each handle's own, as each SQLite process's is. Nothing outlives the process.
///
/// Every call is one turn of the database's lock; the logic is synchronous `mutating` methods of
/// ``InMemoryDatabase/State``, the methods here only encode, lock and decode.
final class InMemoryDownloadStore: DownloadStore {
    /// Where its records are, for messages.
    static let location = "memory"

    let database: InMemoryDatabase
    /// This handle, as an owner of claims and commits.
    let owner: Int

    var location: String { Self.location }

    /// A store on a new, empty database.
    convenience init() { self.init(database: InMemoryDatabase()) }

    /// Another handle on the records of `other`, as another process opening the same database file.
    convenience init(sharingRecordsOf other: InMemoryDownloadStore) { self.init(database: other.database) }

    private init(database: InMemoryDatabase) {
        self.database = database
        owner = database.state.withLock { $0.newOwner() }
    }

    /// Its claims and event targets end with it, as a process's locks and triggers end with the process.
    deinit { database.state.withLock { $0.end(owner) } }

    // MARK: Reading

    func fetchAll() throws(DownloadError) -> [DownloadRecord] { records { _ in true } }

    func forEachRecord(_ body: (DownloadRecord) -> Void) throws(DownloadError) { visit({ _ in true }, body) }

    func forEachUnfinishedRecord(_ body: (DownloadRecord) -> Void) throws(DownloadError) {
        visit(Self.isUnfinished, body)
    }

    func unfinishedCount() throws(DownloadError) -> Int { snapshot().rows.count(where: Self.isUnfinished) }

    func completedIDs() throws(DownloadError) -> [DownloadID] {
        snapshot().rows.filter { !Self.isUnfinished($0) }.map { DownloadID(rawValue: $0.id) }
    }

    func fetch(_ ids: [DownloadID]) throws(DownloadError) -> [DownloadRecord] {
        let table = snapshot()
        return decode(Set(ids.map(\.rawValue)).sorted().compactMap(table.row))
    }

    /// Bases compared byte by byte, as SQLite compares text (not as Swift compares strings).
    func fetchRecords(urlBases bases: [String]) throws(DownloadError) -> [DownloadRecord] {
        let wanted = Set(bases.map { Array($0.utf8) })
        return records { row in
            guard case .text(let url) = row[.url] else { return false }
            return wanted.contains(Array(URLBase.of(url).utf8))
        }
    }

    func fetch(_ id: DownloadID) throws(DownloadError) -> DownloadRecord? {
        snapshot().row(id.rawValue).map { decode([$0])[0] }
    }

    func fetchUpdated(since date: Date) throws(DownloadError) -> [DownloadRecord] {
        let since = Self.stored(date)
        return records { if case .date(let updated) = $0[.updatedAt] { updated >= since } else { false } }
    }

    func fetchIDs() throws(DownloadError) -> Set<DownloadID> {
        Set(snapshot().rows.map { DownloadID(rawValue: $0.id) })
    }

    func count() throws(DownloadError) -> Int { snapshot().rows.count }

    func changeToken() throws(DownloadError) -> Int { database.state.withLock { $0.changeToken(for: owner) } }

    // MARK: Writing

    func insert(_ records: consuming [DownloadRecord]) throws(DownloadError) -> [DownloadRecord] {
        var inserted = records
        let rows = try Self.encoded(inserted, DownloadColumn.allCases).map(\.values)
        let ids = try database.state.withLock { state throws(DownloadError) in try state.insert(rows, by: owner) }
        for (index, id) in zip(inserted.indices, ids) { inserted[index].id = id }
        return inserted
    }

    func saveLifecycle(_ records: [DownloadRecord]) throws(DownloadError) {
        try update([(DownloadColumn.lifecycle, records)])
    }

    func recordRunning(_ records: [DownloadRecord]) throws(DownloadError) {
        let running = records.map { (id: $0.id, startedAt: StoredValue($0.startedAt.map(Self.stored))) }
        let now = Self.stored(Date())
        database.state.withLock { $0.recordRunning(running, now: now, by: owner) }
    }

    func saveSettings(_ record: DownloadRecord) throws(DownloadError) {
        try update([(DownloadColumn.settings, [record])])
    }

    func saveTransfers(_ records: [DownloadRecord]) throws(DownloadError) {
        try update([(DownloadColumn.job, records)])
    }

    func saveLifecycleAndTransfers(lifecycle: [DownloadRecord], transfers: [DownloadRecord]) throws(DownloadError) {
        try update([(DownloadColumn.lifecycle, lifecycle), (DownloadColumn.job, transfers)])
    }

    @discardableResult
    func checkpoint(
        _ id: DownloadID, generation: Int64, durableBytes: Int64, segments: [Segment]?, bootID: String?
    ) throws(DownloadError) -> Bool {
        let plan = try StoredJSON.planText(segments)
        let now = Self.stored(Date())
        return database.state.withLock {
            $0.checkpoint(
                id.rawValue, generation: generation, durableBytes: durableBytes, plan: plan, bootID: bootID, now: now,
                by: owner)
        }
    }

    func distrustUnsyncedBytes(_ id: DownloadID) throws(DownloadError) {
        database.state.withLock { $0.distrustUnsyncedBytes(id.rawValue, by: owner) }
    }

    func delete(_ ids: [DownloadID]) throws(DownloadError) {
        database.state.withLock { $0.delete(Set(ids.map(\.rawValue)), by: owner) }
    }

    /// Always reachable, always writable.
    func probe() throws(DownloadError) {}

    // MARK: Claiming

    func claim(_ id: DownloadID, share: HostShare, viewToken: Int?) -> ClaimOutcome {
        database.state.withLock { $0.claim(id.rawValue, share: share, viewToken: viewToken, by: owner) }
    }

    func widenClaim(_ id: DownloadID, share: HostShare) -> Int { max(1, min(share.wanted, share.limit)) }

    func release(_ id: DownloadID) { database.state.withLock { $0.release(id.rawValue, by: owner) } }

    func claimedElsewhere(_ ids: [DownloadID]) -> Set<DownloadID> {
        let held = database.state.withLock { $0.claimedElsewhere(ids.map(\.rawValue), by: owner) }
        return Set(held.map(DownloadID.init(rawValue:)))
    }

    /// None: a claim is held until its handle releases it or is gone.
    func lostClaims() -> Set<DownloadID> { [] }

    /// None: claims are anonymous, as SQLite's locks.
    func claimHolders() throws(DownloadError) -> [DownloadID: String] { [:] }

    // MARK: Events

    func enableOutbox(for targets: [EventTarget]) throws(DownloadError) -> any EventOutbox {
        InMemoryEventOutbox(database: database, writer: owner, targets: targets)
    }
}

extension InMemoryDownloadStore {
    /// The table as of now: read without the lock held (a copy that shares its storage).
    private func snapshot() -> InMemoryDatabase.Table { database.state.withLock { $0.table } }

    /// The records of the rows `included` takes, in id order.
    private func records(_ included: (InMemoryDatabase.Row) -> Bool) -> [DownloadRecord] {
        decode(snapshot().rows.filter(included))
    }

    /// Hands the records of the rows `included` takes to `body`, one at a time, outside the lock (`body` may call
    /// the store).
    private func visit(_ included: (InMemoryDatabase.Row) -> Bool, _ body: (DownloadRecord) -> Void) {
        var decoder = DownloadRecordDecoder()
        for row in snapshot().rows where included(row) { body(decoder.decodeOrMarkDamaged(InMemoryStoredRow(row))) }
    }

    private func decode(_ rows: [InMemoryDatabase.Row]) -> [DownloadRecord] {
        var decoder = DownloadRecordDecoder()
        return rows.map { decoder.decodeOrMarkDamaged(InMemoryStoredRow($0)) }
    }

    /// Writes each group's columns of its records (the last of an id in a group wins), in one turn of the lock.
    private func update(_ groups: [(columns: [DownloadColumn], records: [DownloadRecord])]) throws(DownloadError) {
        let encoded = try groups.map { group throws(DownloadError) in
            (group.columns, try Self.encoded(BatchedWriteSQL.lastOfEachID(group.records), group.columns))
        }
        database.state.withLock { state in
            for (columns, rows) in encoded { state.update(columns, rows, by: owner) }
        }
    }

    /// The values of `columns` of each record, as stored.
    private static func encoded(
        _ records: [DownloadRecord], _ columns: [DownloadColumn]
    ) throws(DownloadError) -> [(id: Int64?, values: [StoredValue])] {
        var encoder = DownloadRecordEncoder()
        do {
            return try records.map { record in
                (record.id, try columns.map { column in Self.asStored(try encoder.value(column, of: record)) })
            }
        } catch {
            throw .stateDatabase(path: location, reason: "\(error)")
        }
    }

    /// A value as SQLite keeps it: a date to the millisecond (its text), anything else as it is.
    private static func asStored(_ value: StoredValue) -> StoredValue {
        if case .date(let date) = value { .date(stored(date)) } else { value }
    }

    /// `date` to the millisecond, as ``DownloadRecordEncoder/text(_:)`` writes it and the decoder reads it back.
    static func stored(_ date: Date) -> Date {
        Date(timeIntervalSince1970: Double(Int64((date.timeIntervalSince1970 * 1000).rounded())) / 1000)
    }

    private static func isUnfinished(_ row: InMemoryDatabase.Row) -> Bool {
        row[.state] != .text(DownloadState.completed.rawValue)
    }

}

/// A row of the in-memory table, read as ``DownloadRecordDecoder`` reads any backend's; a value of another type
/// throws (the row then reads as damaged).
struct InMemoryStoredRow: StoredRow {
    let values: [StoredValue]

    init(_ row: InMemoryDatabase.Row) { values = row.values }

    func integer(at index: Int) throws -> Int64? {
        switch values[index] {
        case .null: nil
        case .integer(let value): value
        default: throw mismatch(index, "an integer")
        }
    }

    func text(at index: Int) throws -> String? {
        switch values[index] {
        case .null: nil
        case .text(let value): value
        default: throw mismatch(index, "a text")
        }
    }

    func boolean(at index: Int) throws -> Bool? {
        switch values[index] {
        case .null: nil
        case .boolean(let value): value
        case .integer(let value): value != 0
        default: throw mismatch(index, "a boolean")
        }
    }

    func date(at index: Int) throws -> Date? {
        switch values[index] {
        case .null: nil
        case .date(let value): value
        default: throw mismatch(index, "a date")
        }
    }

    private func mismatch(_ index: Int, _ expected: String) -> DownloadError {
        .internalError("column \(index) holds \(values[index]), not \(expected)")
    }
}
