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
/// Calls are asynchronous, as the protocol's: each awaits its round trips (postgres-nio runs them on its event
/// loops; nothing blocks a thread), one call at a time per connection (``Lane``, an asynchronous turn): one for
/// claims and leases, one for everything else. Each write is as few round trips as it can be: a group of records is
/// one statement (``PostgresBatchedWrite``), and a single statement needs no `BEGIN` and `COMMIT`.
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
    /// The heartbeat: renews the leases every third of ``leaseTimeout``, as a repeated task of an event loop (the
    /// round trip goes out on the leases' connection of its own, so it waits behind no write). Not a Swift task: a
    /// lease must not lapse because the cooperative pool is busy with the process's other work, and nothing in it
    /// blocks a thread. Cancelled to stop it.
    let heartbeat = Mutex<RepeatedTask?>(nil)
    /// Statements sent so far: each is a round trip, which is what a shared queue's writes cost.
    let sent = Atomic<Int>(0)
    /// Builds the batched `INSERT`s and `UPDATE`s.
    private let writer: PostgresBatchedWrite

    /// Connects to the database `url` names (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`, `?sslmode=require` for
    /// TLS) and brings the schema up to date.
    init(url: URL, owner: String, leaseTimeout: Duration, logger: Logger) async throws(DownloadError) {
        location = ProxySettings.masked(url.absoluteString)
        self.owner = owner
        self.leaseTimeout = leaseTimeout
        self.logger = logger
        writer = PostgresBatchedWrite(table: Self.table, owner: owner)
        let configuration = try Self.configuration(url)
        connectionSettings = configuration
        let location = location
        func connect(_ id: Int) async throws(DownloadError) -> PostgresConnection {
            do {
                return try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id,
                    logger: logger)
            } catch {
                throw .sharedDatabase(location, reason: "cannot connect: \(Self.describe(error))")
            }
        }
        data = Lane(try await connect(1))
        leases = Lane(try await connect(3))
        hosts = Lane(try await connect(4))
        listener = try await connect(2)
        try await migrate()
        // Listening starts before this returns: the statement after it runs once LISTEN has been processed.
        // This worker's own writes are not changes by another writer: its connections' notifications are not counted.
        let own: Set<Int32> = [
            try await Self.backendID(of: data.connection, at: location, logger: logger),
            try await Self.backendID(of: leases.connection, at: location, logger: logger),
        ]
        listener.addListener(channel: Self.channel) { [weak self] _, notification in
            if !own.contains(notification.backendPID) { self?.changes.add(1, ordering: .relaxed) }
        }
        do {
            _ = try await listener.query("SELECT 1", logger: logger).get()
        } catch {
            throw .sharedDatabase(location, reason: "cannot listen for changes: \(Self.describe(error))")
        }
        let interval = TimeAmount.nanoseconds(Int64((leaseTimeout / 3).inSeconds * 1_000_000_000))
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        heartbeat.withLock {
            $0 = loop.scheduleRepeatedAsyncTask(initialDelay: interval, delay: interval) { [weak self] repeated in
                // Holds the store only while it renews: a released store ends the task at its next run.
                guard let store = self else {
                    repeated.cancel()
                    return loop.makeSucceededVoidFuture()
                }
                return store.renewLeases().hop(to: loop)
            }
        }
    }

    deinit {
        heartbeat.withLock { $0?.cancel() }
        // A connection must be closed before it is released: each is kept until its close completes.
        for open in [data.connection, leases.connection, hosts.connection, listener] {
            open.close().whenComplete { _ in _ = open }
        }
    }

    /// The server process of `connection`: notifications name the one whose transaction sent them.
    private static func backendID(
        of connection: PostgresConnection, at location: String, logger: Logger
    ) async throws(DownloadError) -> Int32 {
        let rows: [PostgresRow]
        do {
            rows = try await connection.query("SELECT pg_backend_pid()", logger: logger).get().rows
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
        /// Taken for each call (awaited, first come first served).
        let calls = AsyncTurn()

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
    ) async throws(DownloadError)
        -> PostgresQueryResult
    {
        let lane = lane ?? data
        return try await retryingConflicts(on: lane) { conflict throws(DownloadError) in
            try await unlockedRun(sql, binds, on: lane.connection, conflict: &conflict)
        }
    }

    /// Attempts of a statement or transaction that conflicts with another transaction (a deadlock, a serialization
    /// failure: PostgreSQL rolls one back, and asks to try again).
    static let conflictAttempts = 4

    /// Runs `call` holding `lane`; again (at most ``conflictAttempts`` times in all, after 10, 20, 40 ms) when it
    /// failed for a conflict with another transaction.
    private func retryingConflicts<T>(
        on lane: Lane, _ call: (_ conflict: inout Bool) async throws(DownloadError) -> T
    ) async throws(DownloadError) -> T {
        var attempt = 1
        while true {
            await lane.calls.take()
            var conflicted = false
            let result: Result<T, DownloadError>
            do throws(DownloadError) {
                result = .success(try await call(&conflicted))
            } catch {
                result = .failure(error)
            }
            lane.calls.give()
            switch result {
            case .success(let value):
                return value
            case .failure(let error):
                guard attempt < Self.conflictAttempts, conflicted else { throw error }
                logger.debug("retrying after a conflict", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                // Bounded: at most ``conflictAttempts`` attempts, 70 ms of backoff in all. Not cancellable (the
                // write must still be tried), so the error of a cancelled sleep is ignored.
                try? await Task.sleep(for: .milliseconds(10 << (attempt - 1)))
                attempt += 1
            }
        }
    }

    /// Runs `body` in one transaction; `body` sends its statements with `send`.
    func transaction<T>(
        _ body: (_ send: Send) async throws(DownloadError) -> T
    ) async throws(DownloadError) -> T {
        let connection = data.connection
        return try await retryingConflicts(on: data) { conflict throws(DownloadError) in
            try await unlockedRun("BEGIN", [], on: connection, conflict: &conflict)
            let send = Send(store: self, connection: connection)
            do throws(DownloadError) {
                let result = try await body(send)
                conflict = conflict || send.conflicted.isSet
                try await unlockedRun("COMMIT", [], on: connection, conflict: &conflict)
                return result
            } catch {
                conflict = conflict || send.conflicted.isSet
                var ignored = false
                _ = try? await unlockedRun("ROLLBACK", [], on: connection, conflict: &ignored)
                throw error
            }
        }
    }

    /// Sends a transaction's statements on its connection (``transaction(_:)``).
    struct Send: Sendable {
        let store: PostgresDownloadStore
        let connection: PostgresConnection
        /// Whether a statement failed for a conflict with another transaction.
        let conflicted = SharedFlag()

        @discardableResult
        func callAsFunction(_ sql: String, _ binds: [StoredValue]) async throws(DownloadError) -> PostgresQueryResult {
            var conflict = false
            defer { if conflict { conflicted.set() } }
            return try await store.unlockedRun(sql, binds, on: connection, conflict: &conflict)
        }
    }

    @discardableResult
    fileprivate func unlockedRun(
        _ sql: String, _ binds: [StoredValue], on connection: PostgresConnection, conflict: inout Bool
    ) async throws(DownloadError) -> PostgresQueryResult {
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
            return try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).get()
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

    func records(_ sql: String, _ binds: [StoredValue] = []) async throws(DownloadError) -> [DownloadRecord] {
        var decoder = DownloadRecordDecoder()
        return try await run(sql, binds).rows.map {
            decoder.decodeOrMarkDamaged(PostgresStoredRow($0.makeRandomAccess()))
        }
    }

    // MARK: - Reading

    func fetchAll() async throws(DownloadError) -> [DownloadRecord] {
        try await records(Self.select + " ORDER BY id")
    }

    func fetch(_ id: DownloadID) async throws(DownloadError) -> DownloadRecord? {
        try await records(Self.select + " WHERE id = $1", [.integer(id.rawValue)]).first
    }

    func fetchUpdated(since date: Date) async throws(DownloadError) -> [DownloadRecord] {
        try await records(Self.select + " WHERE updatedAt >= $1 ORDER BY id", [.date(date)])
    }

    func fetchIDs() async throws(DownloadError) -> Set<DownloadID> {
        Set(
            try await run("SELECT id FROM \(Self.table)").rows.compactMap { row in
                (try? row.makeRandomAccess()[0].decode(Int64.self)).map(DownloadID.init(rawValue:))
            })
    }

    func count() async throws(DownloadError) -> Int {
        let row = try await run("SELECT count(*) FROM \(Self.table)").rows.first
        return Int((try? row?.makeRandomAccess()[0].decode(Int64.self)) ?? 0)
    }

    func changeToken() async throws(DownloadError) -> Int { changes.load(ordering: .relaxed) }

    // MARK: - Writing

    /// One record: one `INSERT … RETURNING id`. More: their ids taken from the table's sequence in one query, in
    /// order, then `INSERT`s of many rows each, in one transaction.
    func insert(_ records: consuming [DownloadRecord]) async throws(DownloadError) -> [DownloadRecord] {
        var records = records
        guard !records.isEmpty else { return [] }
        var encoder = DownloadRecordEncoder()
        if records.count == 1 {
            let statement = try writer.insertReturningID(records[0], encoder: &encoder)
            let row = try await run(statement.sql, statement.values).rows.first
            records[0].id = try? row?.makeRandomAccess()[0].decode(Int64.self)
            return records
        }
        try await transaction { send throws(DownloadError) in
            let ids = try await send(
                """
                SELECT nextval(pg_get_serial_sequence('\(Self.table)', 'id')) FROM generate_series(1, $1) ORDER BY 1
                """, [.integer(Int64(records.count))]
            ).rows.map { try? $0.makeRandomAccess()[0].decode(Int64.self) }
            guard ids.count == records.count, !ids.contains(nil) else {
                throw DownloadError.sharedDatabase(location, reason: "it gave \(ids.count) ids for \(records.count)")
            }
            for index in records.indices { records[index].id = ids[index] }
            for statement in try writer.inserts(records, encoder: &encoder) {
                _ = try await send(statement.sql, statement.values)
            }
        }
        return records
    }

    func saveLifecycle(_ records: [DownloadRecord]) async throws(DownloadError) {
        try await update(PostgresBatchedWrite.updates(DownloadColumn.lifecycle, records, rule: .releasingCompleted))
    }

    func recordRunning(_ records: [DownloadRecord]) async throws(DownloadError) {
        let now = Date()
        let started = records.map { record in
            var record = record
            record.updatedAt = now
            return record
        }
        try await update(PostgresBatchedWrite.updates([.startedAt, .updatedAt], started, rule: .startingQueued))
    }

    func saveSettings(_ record: DownloadRecord) async throws(DownloadError) {
        try await update(PostgresBatchedWrite.updates(DownloadColumn.settings, [record], rule: .any))
    }

    func saveTransfers(_ records: [DownloadRecord]) async throws(DownloadError) {
        try await update(PostgresBatchedWrite.updates(DownloadColumn.job, records, rule: .unleasedOrOwner))
    }

    func saveLifecycleAndTransfers(
        lifecycle: [DownloadRecord], transfers: [DownloadRecord]
    ) async throws(DownloadError) {
        try await update(
            PostgresBatchedWrite.updates(DownloadColumn.lifecycle, lifecycle, rule: .releasingCompleted)
                + PostgresBatchedWrite.updates(DownloadColumn.job, transfers, rule: .unleasedOrOwner))
    }

    /// Sends `updates` so that all or none take effect: one statement when they fit in one (no `BEGIN` and
    /// `COMMIT`: a statement is atomic by itself), else a transaction. A download recorded completed has given up
    /// its lease in the same statement, so its claim needs no release of its own.
    private func update(_ updates: [PostgresBatchedWrite.Update]) async throws(DownloadError) {
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
                try await run(statements[0].sql, statements[0].values)
            } else {
                try await transaction { send throws(DownloadError) in
                    for statement in statements { _ = try await send(statement.sql, statement.values) }
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
    ) async throws(DownloadError) -> Bool {
        let plan = try StoredJSON.planText(segments)
        // Under this worker's lease only: a worker that lost it never claims bytes for the one that took over.
        let result = try await run(
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

    func distrustUnsyncedBytes(_ id: DownloadID) async throws(DownloadError) {
        try await run("UPDATE \(Self.table) SET bootID = NULL WHERE id = $1", [.integer(id.rawValue)])
    }

    func delete(_ ids: [DownloadID]) async throws(DownloadError) {
        guard !ids.isEmpty else { return }
        try await transaction { send throws(DownloadError) in
            for chunk in Self.idChunks(ids) {
                _ = try await send("DELETE FROM \(Self.table) WHERE id IN (\(Self.placeholders(chunk.count)))", chunk)
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
