import Foundation
import HaulKit
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// The shared ``DownloadStore``: one PostgreSQL table that many workers on many machines drain together.
///
/// The columns are ``DownloadColumn``'s (the schema is derived from it and checked at open), plus a lease: the
/// worker holding a download (``owner``) and until when. A claim takes a download whose lease is free or expired
/// (`FOR UPDATE SKIP LOCKED`, so workers never wait on each other's rows); a heartbeat renews this worker's leases
/// every third of ``leaseTimeout``; a worker that dies loses its leases when they expire, and another takes its
/// downloads over. A worker that lost a lease can no longer write that download's progress (checkpoints and
/// transfer columns are written only under the lease). Every write but a lease's alone (a claim, a renewal, a release)
/// notifies the workers (`LISTEN/NOTIFY`); ``changeToken()`` counts the notifications of other workers' writes.
///
/// Calls are synchronous, as the protocol's: each waits for its round trips on the calling thread (never an event
/// loop's), one call at a time per connection: one for claims and leases, one for everything else. Each write is as
/// few round trips as it can be: a group of records is one statement (``PostgresBatchedWrite``), and a single
/// statement needs no `BEGIN` and `COMMIT`.
final class PostgresDownloadStore: DownloadStore {
    /// The table's name: a database may be shared with other applications.
    static let table = "haul_download"
    /// The notification channel every change is announced on.
    static let channel = "haul_download_changed"

    /// This worker's name in leases (`--worker-name`, else `HOST:PID`).
    let owner: String
    /// How long a lease lasts without a heartbeat.
    let leaseTimeout: Duration
    let location: String

    /// Writes and reads of records.
    let data: Lane
    /// Claims, releases and lease renewals, on a connection of their own: a claim never waits behind a group's
    /// write (the manager starts the next download while the finishing group records the last ones).
    let leases: Lane
    /// The hosts' request schedule (`haul_host`), on a connection of its own: a reservation per request never waits
    /// behind a claim or a lease renewal.
    let hosts: Lane
    private let listener: PostgresConnection
    /// How to connect: kept to connect again when the server came back (``probe()``).
    let connectionSettings: PostgresConnection.Configuration
    let logger: Logger
    /// Bumped by every notification: another worker (or this one) changed a record.
    let changes = Atomic<Int>(0)
    /// The downloads whose lease this worker lost since ``lostClaims()`` was last called.
    let lost = Mutex<Set<DownloadID>>([])
    /// The downloads this worker holds a lease on.
    let held = Mutex<Set<DownloadID>>([])
    /// Set to stop the heartbeat: a thread of its own that renews the leases every third of ``leaseTimeout``, so
    /// a busy cooperative pool or I/O thread pool never delays a renewal past the lease.
    let heartbeatStopped = Atomic<Bool>(false)
    /// Statements sent so far: each is a round trip, which is what a shared queue's writes cost.
    private let sent = Atomic<Int>(0)
    /// Builds the batched `INSERT`s and `UPDATE`s.
    private let writer: PostgresBatchedWrite

    /// Connects to the database `url` names (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`, `?sslmode=require` for
    /// TLS) and brings the schema up to date.
    init(url: URL, owner: String, leaseTimeout: Duration, logger: Logger) throws(DownloadError) {
        location = ProxySettings.masked(url.absoluteString)
        self.owner = owner
        self.leaseTimeout = leaseTimeout
        self.logger = logger
        writer = PostgresBatchedWrite(table: Self.table, owner: owner)
        let configuration = try Self.configuration(url)
        connectionSettings = configuration
        let location = location
        func connect(_ id: Int) throws(DownloadError) -> PostgresConnection {
            do {
                return try PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id,
                    logger: logger
                ).wait()
            } catch {
                throw .sharedDatabase(location, reason: "cannot connect: \(Self.describe(error))")
            }
        }
        data = Lane(try connect(1))
        leases = Lane(try connect(3))
        hosts = Lane(try connect(4))
        listener = try connect(2)
        try migrate()
        // Listening starts before this returns: the statement after it runs once LISTEN has been processed.
        // This worker's own writes are not changes by another writer: its connections' notifications are not counted.
        let own = Set(
            try [data, leases].map { lane throws(DownloadError) in
                try Self.backendID(of: lane.connection, at: location, logger: logger)
            })
        listener.addListener(channel: Self.channel) { [weak self] _, notification in
            if !own.contains(notification.backendPID) { self?.changes.add(1, ordering: .relaxed) }
        }
        do {
            _ = try listener.query("SELECT 1", logger: logger).wait()
        } catch {
            throw .sharedDatabase(location, reason: "cannot listen for changes: \(Self.describe(error))")
        }
        let interval = (leaseTimeout / 3).inSeconds
        let thread = Thread { [weak self] in
            var next = Date().addingTimeInterval(interval)
            while let store = self, !store.heartbeatStopped.load(ordering: .relaxed) {
                // Short naps: a released store ends its thread within 100 ms.
                if Date() < next {
                    Thread.sleep(forTimeInterval: min(0.1, next.timeIntervalSinceNow))
                    continue
                }
                store.renewLeases()
                next = Date().addingTimeInterval(interval)
            }
        }
        thread.name = "haul-lease-heartbeat"
        thread.start()
    }

    deinit {
        heartbeatStopped.store(true, ordering: .relaxed)
        // A connection must be closed before it is released: each is kept until its close completes.
        for open in [data.connection, leases.connection, hosts.connection, listener] {
            open.close().whenComplete { _ in _ = open }
        }
    }

    /// The server process of `connection`: notifications name the one whose transaction sent them.
    private static func backendID(
        of connection: PostgresConnection, at location: String, logger: Logger
    ) throws(DownloadError) -> Int32 {
        let rows: [PostgresRow]
        do {
            rows = try connection.query("SELECT pg_backend_pid()", logger: logger).wait().rows
        } catch {
            throw .sharedDatabase(location, reason: describe(error))
        }
        guard let id = try? rows.first?.makeRandomAccess()[0].decode(Int32.self) else {
            throw .sharedDatabase(location, reason: "it did not say which process serves a connection")
        }
        return id
    }

    private static func configuration(_ url: URL) throws(DownloadError) -> PostgresConnection.Configuration {
        guard ["postgres", "postgresql"].contains(url.scheme?.lowercased() ?? ""), let host = url.host,
            let user = url.user
        else {
            throw .invalidRequest(
                "'\(ProxySettings.masked(url.absoluteString))' is not a database URL like "
                    + "postgres://USER:PASSWORD@HOST:5432/DATABASE")
        }
        let database = url.path.split(separator: "/").first.map(String.init)
        let mode =
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
            .first { $0.name == "sslmode" }?.value ?? "disable"
        let tls: PostgresConnection.Configuration.TLS
        switch mode {
        case "disable":
            tls = .disable
        case "require", "verify-ca", "verify-full":
            do {
                var client = TLSConfiguration.makeClientConfiguration()
                if mode == "require" { client.certificateVerification = .none }  // libpq's meaning of require
                tls = .require(try NIOSSLContext(configuration: client))
            } catch {
                throw .invalidRequest("cannot set up TLS for the database: \(error)")
            }
        default:
            throw .invalidRequest("sslmode=\(mode) is not one of disable, require, verify-ca, verify-full")
        }
        return PostgresConnection.Configuration(
            host: host, port: url.port ?? 5432, username: user.removingPercentEncoding ?? user,
            password: url.password?.removingPercentEncoding, database: database, tls: tls)
    }

    /// Statements sent to the database so far, each one round trip (for tests and benchmarks).
    var statementCount: Int { sent.load(ordering: .relaxed) }

    // MARK: - Queries

    /// One connection and its turn: a transaction's statements must not interleave with another's.
    final class Lane: Sendable {
        private let current: Mutex<PostgresConnection>
        /// Held for each call; during it, whether its failure was a conflict with another transaction.
        let calls = Mutex(false)

        init(_ connection: PostgresConnection) { current = Mutex(connection) }

        var connection: PostgresConnection { current.withLock { $0 } }

        /// Puts `connection` in place of a closed one (``PostgresDownloadStore/probe()``).
        func replace(with connection: PostgresConnection) {
            let old = current.withLock { current in
                defer { current = connection }
                return current
            }
            old.close().whenComplete { _ in _ = old }
        }
    }

    /// Runs `sql` with `binds` ($1, $2, …) on `lane` (default: the data connection) and returns its rows and how many
    /// it changed.
    @discardableResult
    func run(
        _ sql: String, _ binds: [StoredValue] = [], on lane: Lane? = nil
    ) throws(DownloadError)
        -> PostgresQueryResult
    {
        let lane = lane ?? data
        return try retryingConflicts(on: lane) { conflict throws(DownloadError) in
            try unlockedRun(sql, binds, on: lane.connection, conflict: &conflict)
        }
    }

    /// Attempts of a statement or transaction that conflicts with another transaction (a deadlock, a serialization
    /// failure: PostgreSQL rolls one back, and asks to try again).
    static let conflictAttempts = 4

    /// Runs `call` holding `lane`; again (at most ``conflictAttempts`` times in all, after 10, 20, 40 ms) when it
    /// failed for a conflict with another transaction.
    private func retryingConflicts<T>(
        on lane: Lane, _ call: (_ conflict: inout Bool) throws(DownloadError) -> T
    ) throws(DownloadError) -> T {
        var attempt = 1
        while true {
            let (result, conflicted) = lane.calls.withLock { conflict -> (Result<T, DownloadError>, Bool) in
                conflict = false
                do throws(DownloadError) {
                    return (.success(try call(&conflict)), false)
                } catch {
                    return (.failure(error), conflict)
                }
            }
            switch result {
            case .success(let value):
                return value
            case .failure(let error):
                guard attempt < Self.conflictAttempts, conflicted else { throw error }
                logger.debug("retrying after a conflict", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.01 * Double(1 << (attempt - 1)))
                attempt += 1
            }
        }
    }

    /// Runs `body` in one transaction; `body` sends its statements with `send`.
    func transaction<T>(
        _ body: (_ send: (String, [StoredValue]) throws(DownloadError) -> PostgresQueryResult) throws(DownloadError) ->
            T
    ) throws(DownloadError) -> T {
        let connection = data.connection
        return try retryingConflicts(on: data) { conflict throws(DownloadError) in
            try unlockedRun("BEGIN", [], on: connection, conflict: &conflict)
            do throws(DownloadError) {
                let result = try body { sql, binds throws(DownloadError) in
                    try unlockedRun(sql, binds, on: connection, conflict: &conflict)
                }
                try unlockedRun("COMMIT", [], on: connection, conflict: &conflict)
                return result
            } catch {
                var ignored = false
                _ = try? unlockedRun("ROLLBACK", [], on: connection, conflict: &ignored)
                throw error
            }
        }
    }

    @discardableResult
    private func unlockedRun(
        _ sql: String, _ binds: [StoredValue], on connection: PostgresConnection, conflict: inout Bool
    ) throws(DownloadError) -> PostgresQueryResult {
        var bindings = PostgresBindings(capacity: binds.count)
        for value in binds {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .boolean(let value): bindings.append(value)
            case .date(let value): bindings.append(value)
            }
        }
        sent.add(1, ordering: .relaxed)
        do {
            return try connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).wait()
        } catch {
            // deadlock_detected, serialization_failure
            if let state = (error as? PSQLError)?.serverInfo?[.sqlState], state == "40P01" || state == "40001" {
                conflict = true
            }
            throw .sharedDatabase(location, reason: Self.describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            return error.serverInfo?[.message] ?? "\(error.code)"
        }
        return String(describing: error)
    }

    /// The ids as parameters, 1,000 a statement.
    static func idChunks(_ ids: [DownloadID]) -> [[StoredValue]] {
        stride(from: 0, to: ids.count, by: 1000).map { start in
            ids[start..<min(ids.count, start + 1000)].map { StoredValue.integer($0.rawValue) }
        }
    }

    /// `$first, $first+1, …` for `count` parameters.
    static func placeholders(_ count: Int, from first: Int = 1) -> String {
        (first..<first + count).map { "$\($0)" }.joined(separator: ", ")
    }

    static let select =
        "SELECT \(DownloadColumn.allCases.map(\.rawValue).joined(separator: ", ")) FROM \(table)"

    func records(_ sql: String, _ binds: [StoredValue] = []) throws(DownloadError) -> [DownloadRecord] {
        var decoder = DownloadRecordDecoder()
        return try run(sql, binds).rows.map { decoder.decodeOrMarkDamaged(PostgresStoredRow($0.makeRandomAccess())) }
    }

    // MARK: - Reading

    func fetchAll() throws(DownloadError) -> [DownloadRecord] {
        try records(Self.select + " ORDER BY id")
    }

    func fetch(_ id: DownloadID) throws(DownloadError) -> DownloadRecord? {
        try records(Self.select + " WHERE id = $1", [.integer(id.rawValue)]).first
    }

    func fetchUpdated(since date: Date) throws(DownloadError) -> [DownloadRecord] {
        try records(Self.select + " WHERE updatedAt >= $1 ORDER BY id", [.date(date)])
    }

    func fetchIDs() throws(DownloadError) -> Set<DownloadID> {
        Set(
            try run("SELECT id FROM \(Self.table)").rows.compactMap { row in
                (try? row.makeRandomAccess()[0].decode(Int64.self)).map(DownloadID.init(rawValue:))
            })
    }

    func count() throws(DownloadError) -> Int {
        let row = try run("SELECT count(*) FROM \(Self.table)").rows.first
        return Int((try? row?.makeRandomAccess()[0].decode(Int64.self)) ?? 0)
    }

    func changeToken() throws(DownloadError) -> Int { changes.load(ordering: .relaxed) }

    // MARK: - Writing

    /// One record: one `INSERT … RETURNING id`. More: their ids taken from the table's sequence in one query, in
    /// order, then `INSERT`s of many rows each, in one transaction.
    func insert(_ records: consuming [DownloadRecord]) throws(DownloadError) -> [DownloadRecord] {
        var records = records
        guard !records.isEmpty else { return [] }
        var encoder = DownloadRecordEncoder()
        if records.count == 1 {
            let statement = try writer.insertReturningID(records[0], encoder: &encoder)
            let row = try run(statement.sql, statement.values).rows.first
            records[0].id = try? row?.makeRandomAccess()[0].decode(Int64.self)
            return records
        }
        try transaction { send throws(DownloadError) in
            let ids = try send(
                """
                SELECT nextval(pg_get_serial_sequence('\(Self.table)', 'id')) FROM generate_series(1, $1) ORDER BY 1
                """, [.integer(Int64(records.count))]
            ).rows.map { try? $0.makeRandomAccess()[0].decode(Int64.self) }
            guard ids.count == records.count, !ids.contains(nil) else {
                throw DownloadError.sharedDatabase(location, reason: "it gave \(ids.count) ids for \(records.count)")
            }
            for index in records.indices { records[index].id = ids[index] }
            for statement in try writer.inserts(records, encoder: &encoder) {
                _ = try send(statement.sql, statement.values)
            }
        }
        return records
    }

    func saveLifecycle(_ records: [DownloadRecord]) throws(DownloadError) {
        try update(PostgresBatchedWrite.updates(DownloadColumn.lifecycle, records, rule: .releasingCompleted))
    }

    func recordRunning(_ records: [DownloadRecord]) throws(DownloadError) {
        let now = Date()
        let started = records.map { record in
            var record = record
            record.updatedAt = now
            return record
        }
        try update(PostgresBatchedWrite.updates([.startedAt, .updatedAt], started, rule: .startingQueued))
    }

    func saveSettings(_ record: DownloadRecord) throws(DownloadError) {
        try update(PostgresBatchedWrite.updates(DownloadColumn.settings, [record], rule: .any))
    }

    func saveTransfers(_ records: [DownloadRecord]) throws(DownloadError) {
        try update(PostgresBatchedWrite.updates(DownloadColumn.job, records, rule: .unleasedOrOwner))
    }

    func saveLifecycleAndTransfers(lifecycle: [DownloadRecord], transfers: [DownloadRecord]) throws(DownloadError) {
        try update(
            PostgresBatchedWrite.updates(DownloadColumn.lifecycle, lifecycle, rule: .releasingCompleted)
                + PostgresBatchedWrite.updates(DownloadColumn.job, transfers, rule: .unleasedOrOwner))
    }

    /// Sends `updates` so that all or none take effect: one statement when they fit in one (no `BEGIN` and
    /// `COMMIT`: a statement is atomic by itself), else a transaction. A download recorded completed has given up
    /// its lease in the same statement, so its claim needs no release of its own.
    private func update(_ updates: [PostgresBatchedWrite.Update]) throws(DownloadError) {
        guard !updates.isEmpty else { return }
        var encoder = DownloadRecordEncoder()
        let statements = try writer.statements(updates, encoder: &encoder)
        // Forgotten first, so the heartbeat never takes a lease this write gives up for one lost to another worker;
        // held again if the write fails.
        let completed = updates.filter { $0.rule == .releasingCompleted }.flatMap { update in
            update.records.filter { $0.state == .completed }.map(\.downloadID)
        }
        let released = completed.isEmpty ? [] : held.withLock { held in completed.filter { held.remove($0) != nil } }
        do throws(DownloadError) {
            if statements.count == 1 {
                try run(statements[0].sql, statements[0].values)
            } else {
                try transaction { send throws(DownloadError) in
                    for statement in statements { _ = try send(statement.sql, statement.values) }
                }
            }
        } catch {
            if !released.isEmpty { held.withLock { $0.formUnion(released) } }
            throw error
        }
    }

    @discardableResult
    func checkpoint(
        _ id: DownloadID, generation: Int64, durableBytes: Int64, segments: [Segment]?, bootID: String?
    ) throws(DownloadError) -> Bool {
        let plan = try StoredJSON.planText(segments)
        // Under this worker's lease only: a worker that lost it never claims bytes for the one that took over.
        let result = try run(
            """
            UPDATE \(Self.table) SET durableBytes = $1, bootID = $2, updatedAt = $3, segments = coalesce($4, segments)
            WHERE id = $5 AND generation = $6 AND leaseOwner = $7 AND NOT finalizing
            """,
            [
                .integer(durableBytes), StoredValue(bootID), .date(Date()), StoredValue(plan), .integer(id.rawValue),
                .integer(generation), .text(owner),
            ])
        return (result.metadata.rows ?? 0) > 0
    }

    func distrustUnsyncedBytes(_ id: DownloadID) throws(DownloadError) {
        try run("UPDATE \(Self.table) SET bootID = NULL WHERE id = $1", [.integer(id.rawValue)])
    }

    func delete(_ ids: [DownloadID]) throws(DownloadError) {
        guard !ids.isEmpty else { return }
        try transaction { send throws(DownloadError) in
            for chunk in Self.idChunks(ids) {
                _ = try send("DELETE FROM \(Self.table) WHERE id IN (\(Self.placeholders(chunk.count)))", chunk)
            }
        }
    }

}

/// A PostgreSQL row read by position, for ``DownloadRecordDecoder``.
private struct PostgresStoredRow: StoredRow {
    let row: PostgresRandomAccessRow

    init(_ row: PostgresRandomAccessRow) { self.row = row }

    func integer(at index: Int) throws -> Int64? { try row[index].decode(Int64?.self) }
    func text(at index: Int) throws -> String? { try row[index].decode(String?.self) }
    func boolean(at index: Int) throws -> Bool? { try row[index].decode(Bool?.self) }
    func date(at index: Int) throws -> Date? { try row[index].decode(Date?.self) }
}
