import Foundation
import GRDB
import GRDBSQLite

/// The embedded ``DownloadStore``: one SQLite file in WAL mode, shared safely by several processes (`haul list`
/// while `haul run` works). Each call is one transaction. Claims are byte-range locks on a file beside it
/// (``DownloadLocks``), which the kernel releases when their owner dies.
final class SQLiteDownloadStore: DownloadStore {
    let path: String
    let database: DatabasePool
    private let locks: DownloadLocks
    /// Whether updates of many records go in batched statements (`UPDATE … FROM`, SQLite 3.33 and later).
    private let batchesUpdates: Bool

    var location: String { path }

    /// The state directory: every download's start and end are written there.
    var stateDirectory: String? { FileSystem.parent(of: path) }

    /// Whether this process's SQLite runs `UPDATE … FROM` (3.33, 2020; older systems, such as Ubuntu 20.04's 3.31,
    /// update one record per statement).
    static let runsUpdateFrom = sqlite3_libversion_number() >= 3_033_000

    /// Opens (creating if needed) the database at `path` and brings its schema up to date. `batchesUpdates`: false
    /// writes one record per statement, as on an SQLite without `UPDATE … FROM`.
    init(path: String, batchesUpdates: Bool = runsUpdateFrom) throws(DownloadError) {
        self.path = path
        self.batchesUpdates = batchesUpdates && Self.runsUpdateFrom
        do {
            // Requests may carry credentials (`-H 'Authorization: …'`): only the owner may read the state.
            try FileSystem.createPrivateDirectory(FileSystem.parent(of: path))
            try FileSystem.restrictToOwner(path, creating: true)
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            configuration.label = "haul"
            // No `targetQueue`: GRDB's queues keep their own threads. A concurrent queue of ours would put every
            // SQLite call on Dispatch's width-limited pool (on Linux, two threads here), shared with the tasks of the
            // same priority, and a statement can wait there (SQLite's busy timeout, a reader's turn): two waiting
            // calls would stop everything else on it.
            configuration.prepareDatabase { db in
                // Durable against process death at every commit; against power loss, a commit can roll back, which
                // only ever makes a record claim fewer bytes.
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
            database = try Self.openPool(path, configuration)
            if try database.read({ try DownloadSchema.migrator.hasBeenSuperseded($0) }) {
                throw DownloadError.stateDatabase(
                    path: path,
                    reason: "it was written by a newer version of Haul, which this one (\(HaulVersion.current)) cannot "
                        + "read safely; use the newer haul, or another state directory")
            }
            try DownloadSchema.migrate(database)
            if let mismatch = try database.read(DownloadSchema.mismatch) {
                throw DownloadError.stateDatabase(
                    path: path, reason: mismatch + "; use the haul that wrote it, or another state directory")
            }
            for suffix in ["-wal", "-shm"] { try FileSystem.restrictToOwner(path + suffix, creating: false) }
            locks = try DownloadLocks(path: path + "-locks")
        } catch {
            throw StateDatabaseFailure.error(error, path: path)
        }
    }

    /// Opens the pool. A new database is switched to WAL first, which SQLite refuses at once (`SQLITE_BUSY`, no busy
    /// handler) while another process opening it at the same moment holds its lock: asked again, after 5 ms and then
    /// twice as long each time up to 100 ms, for as long as the busy timeout (10 s).
    private static func openPool(_ path: String, _ configuration: Configuration) throws -> DatabasePool {
        let start = ContinuousClock.now
        var wait = Duration.milliseconds(5)
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError
                where error.resultCode == .SQLITE_BUSY && start.duration(to: .now) < .seconds(10)
            {
                Thread.sleep(forTimeInterval: wait.inSeconds)
                wait = min(wait * 2, .milliseconds(100))
            }
        }
    }

    /// Runs `body` in a write transaction on GRDB's serial writer queue (``DatabasePool/awaitingWrite(_:)``).
    private nonisolated(nonsending) func write<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(DownloadError) -> T {
        do {
            return try await database.awaitingWrite(body)
        } catch {
            throw StateDatabaseFailure.error(error, path: path)
        }
    }

    /// Runs `body` outside a transaction on GRDB's serial writer queue.
    private nonisolated(nonsending) func writeWithoutTransaction<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(DownloadError) -> T {
        do {
            return try await database.awaitingWriteWithoutTransaction(body)
        } catch {
            throw StateDatabaseFailure.error(error, path: path)
        }
    }

    /// Runs `body` in a read transaction on one of GRDB's reader queues.
    private nonisolated(nonsending) func read<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(DownloadError) -> T {
        do {
            return try await database.awaitingRead(body)
        } catch {
            throw StateDatabaseFailure.error(error, path: path)
        }
    }

    /// How many records ``forEachRecord(_:)`` reads at a time: the caller sees them between reads, on its own
    /// executor, and a queue of 100,000 is never all in memory beside its table.
    static let readChunk = 2_000

    /// Hands the records `condition` selects to `body`, oldest first, in chunks of ``readChunk`` (each one read).
    private nonisolated(nonsending) func forEach(
        where condition: String?, _ body: (DownloadRecord) -> Void
    ) async throws(DownloadError) {
        var after: Int64 = 0
        let sql =
            DownloadColumn.select + " WHERE " + (condition.map { "\($0) AND " } ?? "") + "id > ? ORDER BY id LIMIT ?"
        while true {
            let from = after
            let chunk = try await read { db in
                try DownloadRecordDecoder.fetchAll(db, sql: sql, arguments: [from, Self.readChunk])
            }
            for record in chunk { body(record) }
            guard chunk.count == Self.readChunk, let last = chunk.last?.id else { return }
            after = last
        }
    }

    nonisolated(nonsending) func forEachRecord(_ body: (DownloadRecord) -> Void) async throws(DownloadError) {
        try await forEach(where: nil, body)
    }

    nonisolated(nonsending) func forEachUnfinishedRecord(
        _ body: (DownloadRecord) -> Void
    ) async throws(DownloadError) {
        // `state <> 'completed'` as the partial index says it (migration v6): only its rows are read.
        try await forEach(where: DownloadColumn.unfinished, body)
    }

    nonisolated(nonsending) func unfinishedCount() async throws(DownloadError) -> Int {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM download WHERE \(DownloadColumn.unfinished)") ?? 0
        }
    }

    nonisolated(nonsending) func completedIDs() async throws(DownloadError) -> [DownloadID] {
        try await read { db in
            try Int64.fetchAll(
                db, sql: "SELECT id FROM download WHERE \(DownloadColumn.completed) ORDER BY id"
            ).map(DownloadID.init(rawValue:))
        }
    }

    nonisolated(nonsending) func fetch(_ ids: [DownloadID]) async throws(DownloadError) -> [DownloadRecord] {
        let sorted = ids.sorted()
        return try await read { db in
            var records: [DownloadRecord] = []
            for chunk in SQLDialect.sqlite.idChunks(sorted) {
                try DownloadRecordDecoder.forEach(
                    db,
                    sql: DownloadColumn.select
                        + " WHERE id IN (\(SQLDialect.sqlite.parameters(chunk.count))) ORDER BY id",
                    arguments: StatementArguments(chunk)
                ) { records.append($0) }
            }
            return records
        }
    }

    nonisolated(nonsending) func fetchRecords(urlBases bases: [String]) async throws(DownloadError) -> [DownloadRecord]
    {
        guard !bases.isEmpty else { return [] }
        // A range of the URL index (migration v6) per base, one statement run for each: the URL itself, and those
        // that go on with a query. A URL has one base, so no record is found twice.
        let records = try await read { db in
            let statement = try db.cachedStatement(
                sql: DownloadColumn.select + " WHERE url = ? OR (url >= ? AND url < ?)")
            var records: [DownloadRecord] = []
            var decoder = DownloadRecordDecoder()
            for base in Set(bases) {
                try DownloadRecordDecoder.forEach(statement, arguments: [base, base + "?", base + "@"], &decoder) {
                    records.append($0)
                }
            }
            return records
        }
        return records.sorted { $0.downloadID < $1.downloadID }
    }

    nonisolated(nonsending) func fetchAll() async throws(DownloadError) -> [DownloadRecord] {
        try await read { db in try DownloadRecordDecoder.fetchAll(db, sql: DownloadColumn.select + " ORDER BY id") }
    }

    /// Records changed at or after `date` (by any process).
    nonisolated(nonsending) func fetchUpdated(since date: Date) async throws(DownloadError) -> [DownloadRecord] {
        try await read { db in
            try DownloadRecordDecoder.fetchAll(
                db, sql: DownloadColumn.select + " WHERE updatedAt >= ? ORDER BY id", arguments: [date])
        }
    }

    /// The identifiers of all records.
    nonisolated(nonsending) func fetchIDs() async throws(DownloadError) -> Set<DownloadID> {
        try await read { db in
            Set(try Int64.fetchAll(db, sql: "SELECT id FROM download").map(DownloadID.init(rawValue:)))
        }
    }

    nonisolated(nonsending) func count() async throws(DownloadError) -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM download") ?? 0 }
    }

    /// Takes the database's write lock (`BEGIN IMMEDIATE`) and lets it go: fails when the file cannot be written
    /// (read-only, gone, locked beyond the busy timeout).
    nonisolated(nonsending) func probe() async throws(DownloadError) {
        try await writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            try db.execute(sql: "ROLLBACK")
        }
    }

    nonisolated(nonsending) func changeToken() async throws(DownloadError) -> Int {
        // Asked before every start: prepared once.
        try await writeWithoutTransaction { db in
            try SQLiteStatementBinder(try db.cachedStatement(sql: "PRAGMA data_version")).integer().map(Int.init) ?? 0
        }
    }

    nonisolated(nonsending) func fetch(_ id: DownloadID) async throws(DownloadError) -> DownloadRecord? {
        try await read { db in
            try DownloadRecordDecoder.fetchAll(
                db, sql: DownloadColumn.select + " WHERE id = ?", arguments: [id.rawValue]
            )
            .first
        }
    }

    /// Inserts new records in one transaction and returns them with their identifiers.
    ///
    /// The first record's id is SQLite's pick (the table's `AUTOINCREMENT`: one past the largest ever), and the
    /// transaction then holds the write lock: the others get the ids SQLite would give them one by one, consecutive,
    /// written in batched statements (one statement per record allocated SQLite's registers again for each).
    nonisolated(nonsending) func insert(
        _ records: consuming [DownloadRecord]
    ) async throws(DownloadError) -> [DownloadRecord] {
        guard !records.isEmpty else { return records }
        // Handed to the writer queue without a copy.
        let handoff = Handoff(records)
        return try await write { [path] db in
            let statements = DownloadColumn.insertion
            var encoder = DownloadRecordEncoder()
            var inserted = handoff.take()
            var values: [StoredValue] = []
            values.reserveCapacity(statements.columns.count)
            try encoder.storeValues(statements.columns, of: inserted[0], in: &values)
            try SQLiteStatementBinder(try db.cachedStatement(sql: statements.single)).execute(values)
            var id = db.lastInsertedRowID
            inserted[0].id = id
            // The batches end with one of a single row: every record is written.
            _ = try Self.writeBatches(
                statements.batches, of: 1..<inserted.count, columns: statements.columns.count, values: &values, in: db
            ) { index, values in
                guard id < Int64.max else {
                    throw DownloadError.stateDatabase(path: path, reason: "no download id is left")
                }
                id += 1
                inserted[index].id = id
                values.append(.integer(id))
                try encoder.appendValues(statements.columns, of: inserted[index], to: &values)
            }
            return inserted
        }
    }

    /// Writes the manager's life-cycle columns of several records in one transaction (100,000 in about a second).
    nonisolated(nonsending) func saveLifecycle(_ records: [DownloadRecord]) async throws(DownloadError) {
        try await update([.init(statements: DownloadColumn.updateLifecycle, records: records)])
    }

    /// Records downloads as running (with their start time) in one transaction, but only those still `queued` in
    /// the database: another process's pause or removal since is kept.
    nonisolated(nonsending) func recordRunning(_ records: [DownloadRecord]) async throws(DownloadError) {
        guard !records.isEmpty else { return }
        let now = StoredValue.text(DownloadRecordEncoder.text(Date()))
        try await write { db in
            let statement = SQLiteStatementBinder(
                try db.cachedStatement(
                    sql: """
                        UPDATE download SET state = '\(DownloadState.running.rawValue)', startedAt = ?, updatedAt = ?
                        WHERE id = ? AND state = '\(DownloadState.queued.rawValue)'
                        """))
            for record in records {
                try statement.execute([StoredValue(record.startedAt), now, StoredValue(record.id)])
            }
        }
    }

    /// Writes the options of `record` (changed after it was added).
    nonisolated(nonsending) func saveSettings(_ record: DownloadRecord) async throws(DownloadError) {
        try await update([.init(statements: DownloadColumn.updateSettings, records: [record])])
    }

    /// Writes the job's columns of several records in one transaction.
    nonisolated(nonsending) func saveTransfers(_ records: [DownloadRecord]) async throws(DownloadError) {
        try await update([.init(statements: DownloadColumn.updateJob, records: records)])
    }

    /// Writes the life-cycle columns of `lifecycle` and the job's columns of `transfers` in one transaction.
    nonisolated(nonsending) func saveLifecycleAndTransfers(
        lifecycle: [DownloadRecord], transfers: [DownloadRecord]
    ) async throws(DownloadError) {
        try await update([
            .init(statements: DownloadColumn.updateLifecycle, records: lifecycle),
            .init(statements: DownloadColumn.updateJob, records: transfers),
        ])
    }

    /// Some columns of some records, written with `statements`.
    private struct ColumnUpdate: Sendable {
        var statements: DownloadColumn.Update
        var records: [DownloadRecord]
    }

    /// Performs `updates` in one transaction. Records go in batches of one statement each
    /// (``DownloadColumn/Update``): SQLite frees a statement's registers when it ends, so each statement run for one
    /// record allocated again for every text column it read back to rebuild the row (about 11 `malloc` calls per
    /// small download), where a batch reuses them.
    private nonisolated(nonsending) func update(_ updates: [ColumnUpdate]) async throws(DownloadError) {
        guard updates.contains(where: { !$0.records.isEmpty }) else { return }
        let batchesUpdates = batchesUpdates
        try await write { db in
            var encoder = DownloadRecordEncoder()
            for update in updates where !update.records.isEmpty {
                let statements = update.statements
                let records = BatchedWriteSQL.lastOfEachID(update.records)
                // One array for every statement run.
                var values: [StoredValue] = []
                let next = try Self.writeBatches(
                    batchesUpdates ? statements.batches : [], of: records.indices,
                    columns: statements.columns.count, values: &values, in: db
                ) { index, values in
                    values.append(StoredValue(records[index].id))
                    try encoder.appendValues(statements.columns, of: records[index], to: &values)
                }
                guard next < records.endIndex else { continue }
                let statement = SQLiteStatementBinder(try db.cachedStatement(sql: statements.single))
                for record in records[next...] {
                    try encoder.storeValues(statements.columns, of: record, in: &values)
                    values.append(StoredValue(record.id))
                    try statement.execute(values)
                }
            }
        }
    }

    /// Writes the items of `range` with `batches` (largest first: each statement takes `rows` items of `columns`
    /// values and an id), as long as a batch's rows are left; `row` appends one item's values (its id, then its
    /// columns) to the array every statement reuses. Returns the first item left for the caller to write alone.
    private static func writeBatches(
        _ batches: [(rows: Int, sql: String)], of range: Range<Int>, columns: Int, values: inout [StoredValue],
        in db: Database, row: (Int, inout [StoredValue]) throws -> Void
    ) throws -> Int {
        var next = range.lowerBound
        for (rows, sql) in batches where range.upperBound - next >= rows {
            let statement = SQLiteStatementBinder(try db.cachedStatement(sql: sql))
            values.reserveCapacity(rows * (columns + 1))
            while range.upperBound - next >= rows {
                values.removeAll(keepingCapacity: true)
                for index in next..<next + rows { try row(index, &values) }
                try statement.execute(values)
                next += rows
            }
        }
        return next
    }

    /// Records that `durableBytes` are synced, unless the part file was cut back since (another generation).
    /// With `segments`, also records the plan of a multi-connection download (each segment's synced bytes).
    @discardableResult
    nonisolated(nonsending) func checkpoint(
        _ id: DownloadID, generation: Int64, durableBytes: Int64, segments: [Segment]?, bootID: String?
    ) async throws(DownloadError) -> Bool {
        let plan = try StoredJSON.planText(segments)
        let now = DownloadRecordEncoder.text(Date())
        return try await write { db in
            let statement = try db.cachedStatement(
                sql: """
                    UPDATE download SET durableBytes = ?, bootID = ?, updatedAt = ?, segments = coalesce(?, segments)
                    WHERE id = ? AND generation = ? AND NOT finalizing
                    """)
            try statement.execute(arguments: [durableBytes, bootID, now, plan, id.rawValue, generation])
            return db.changesCount > 0
        }
    }

    /// Forgets the boot a part file was written in, so the next run trusts only the bytes the last checkpoint
    /// recorded as synced (after a failed sync, the page cache's bytes may never reach the disk).
    nonisolated(nonsending) func distrustUnsyncedBytes(_ id: DownloadID) async throws(DownloadError) {
        try await write { db in
            try db.execute(sql: "UPDATE download SET bootID = NULL WHERE id = ?", arguments: [id.rawValue])
        }
    }

    /// Deletes records in one transaction.
    nonisolated(nonsending) func delete(_ ids: [DownloadID]) async throws(DownloadError) {
        guard !ids.isEmpty else { return }
        try await write { db in
            for chunk in SQLDialect.sqlite.idChunks(ids) {
                try db.execute(
                    sql: "DELETE FROM download WHERE id IN (\(SQLDialect.sqlite.parameters(chunk.count)))",
                    arguments: StatementArguments(chunk))
            }
        }
    }

    // MARK: - Claims

    /// The lock is the claim; the host's limit is this process's own (its HTTP connection pool holds it).
    nonisolated(nonsending) func claim(_ id: DownloadID, share: HostShare, viewToken: Int?) async -> ClaimOutcome {
        await claim([(id, share)], viewToken: viewToken)[0]
    }

    /// Claims taken together cost one read of their states, not one each.
    var claimsTogether: Bool { true }
    /// A claim is the download's lock and nothing else: taken ahead, it keeps no other owner from anything but
    /// that download.
    var claimsAhead: Bool { true }

    /// Each lock taken without waiting (`F_SETLK`: no I/O to wait for; held already: taken again), then the states of
    /// those taken read at once. Under its lock, no other process can start a download; one may have finished it
    /// just before, so the state is always read: the caller's view (`viewToken`) can lack another process's
    /// completion even when no commit followed it (the record's `updatedAt` is stamped when the job finishes, and
    /// committed later by its finishing group).
    nonisolated(nonsending) func claim(
        _ requests: [(id: DownloadID, share: HostShare)], viewToken: Int?
    ) async -> [ClaimOutcome] {
        _ = viewToken
        let locked = locks.tryLock(requests.map(\.id))
        let ids = zip(requests, locked).compactMap { request, locked in locked ? request.id : nil }
        let states: [Int64: String] =
            ids.isEmpty
            ? [:]
            : (try? await database.awaitingReadWithoutTransaction { db -> [Int64: String] in
                var states: [Int64: String] = [:]
                for chunk in SQLDialect.sqlite.idChunks(ids) {
                    let rows = try Row.fetchCursor(
                        db.cachedStatement(
                            sql:
                                "SELECT id, state FROM download WHERE id IN (\(SQLDialect.sqlite.parameters(chunk.count)))"
                        ),
                        arguments: StatementArguments(chunk))
                    while let row = try rows.next() {
                        let id: Int64 = row[0]
                        states[id] = row[1] as String
                    }
                }
                return states
            }) ?? [:]
        let runnable: Set<String> = [DownloadState.queued.rawValue, DownloadState.running.rawValue]
        return zip(requests, locked).map { request, locked in
            guard locked else { return .refused }
            guard let state = states[request.id.rawValue], runnable.contains(state) else {
                locks.unlock(request.id)
                return .refused
            }
            return .granted(connections: max(1, min(request.share.wanted, request.share.limit)))
        }
    }

    nonisolated(nonsending) func widenClaim(_ id: DownloadID, share: HostShare) async -> Int {
        max(1, min(share.wanted, share.limit))
    }

    nonisolated(nonsending) func release(_ id: DownloadID) async { locks.unlock(id) }

    /// A download this store holds is not claimed elsewhere (``DownloadLocks`` knows its own).
    nonisolated(nonsending) func claimedElsewhere(_ ids: [DownloadID]) async -> Set<DownloadID> {
        Set(ids.filter(locks.isHeldElsewhere))
    }

    /// None: a lock is held until its owner releases it or dies.
    nonisolated(nonsending) func lostClaims() async -> Set<DownloadID> { [] }

    /// None: a lock names no owner.
    nonisolated(nonsending) func claimHolders() async throws(DownloadError) -> [DownloadID: String] { [:] }
}

/// A value handed to a closure that runs once on another thread, so that it arrives uniquely referenced (a batch of
/// 100,000 records is not copied to be changed there).
final class Handoff<Value>: @unchecked Sendable {
    // Written once here and taken once by the one closure that holds it: never touched by two threads at once.
    private var value: Value?

    init(_ value: consuming Value) { self.value = value }

    /// The value, given up by the handoff.
    func take() -> Value {
        defer { value = nil }
        return value.take()!
    }
}

extension SQLiteDownloadStore {
    /// Records events with temporary triggers on this process's writer connection (``SQLiteEventOutbox``).
    nonisolated(nonsending) func enableOutbox(for targets: [EventTarget]) async throws(DownloadError) -> any EventOutbox
    {
        try SQLiteEventOutbox(database: database, path: path, targets: targets)
    }
}
