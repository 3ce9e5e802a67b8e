import Foundation
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
    private let data: Lane
    /// Claims, releases and lease renewals, on a connection of their own: a claim never waits behind a group's
    /// write (the manager starts the next download while the finishing group records the last ones).
    private let leases: Lane
    private let listener: PostgresConnection
    private let logger: Logger
    /// Bumped by every notification: another worker (or this one) changed a record.
    private let changes = Atomic<Int>(0)
    /// The downloads this worker holds a lease on.
    private let held = Mutex<Set<DownloadID>>([])
    /// Set to stop the heartbeat: a thread of its own that renews the leases every third of ``leaseTimeout``, so
    /// a busy cooperative pool or I/O thread pool never delays a renewal past the lease.
    private let heartbeatStopped = Atomic<Bool>(false)
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
        for open in [data.connection, leases.connection, listener] { open.close().whenComplete { _ in _ = open } }
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
    private final class Lane: Sendable {
        let connection: PostgresConnection
        /// Held for each call; during it, whether its failure was a conflict with another transaction.
        let calls = Mutex(false)

        init(_ connection: PostgresConnection) { self.connection = connection }
    }

    /// Runs `sql` with `binds` ($1, $2, …) on `lane` (default: the data connection) and returns its rows and how many
    /// it changed.
    @discardableResult
    private func run(
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
    private func transaction<T>(
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

    private static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            return error.serverInfo?[.message] ?? "\(error.code)"
        }
        return String(describing: error)
    }

    /// The ids as parameters, 1,000 a statement.
    private static func idChunks(_ ids: [DownloadID]) -> [[StoredValue]] {
        stride(from: 0, to: ids.count, by: 1000).map { start in
            ids[start..<min(ids.count, start + 1000)].map { StoredValue.integer($0.rawValue) }
        }
    }

    /// `$first, $first+1, …` for `count` parameters.
    private static func placeholders(_ count: Int, from first: Int = 1) -> String {
        (first..<first + count).map { "$\($0)" }.joined(separator: ", ")
    }

    private static let select =
        "SELECT \(DownloadColumn.allCases.map(\.rawValue).joined(separator: ", ")) FROM \(table)"

    private func records(_ sql: String, _ binds: [StoredValue] = []) throws(DownloadError) -> [DownloadRecord] {
        var decoder = DownloadRecordDecoder()
        return try run(sql, binds).rows.map { decoder.decodeOrMarkDamaged(PostgresStoredRow($0.makeRandomAccess())) }
    }

    // MARK: - Schema

    /// The PostgreSQL type of a column.
    static func type(of column: DownloadColumn) -> String {
        switch column.sqlType {
        case "INTEGER": "BIGINT"
        case "DATETIME": "TIMESTAMPTZ"
        case "BOOLEAN": "BOOLEAN"
        default: "TEXT"
        }
    }

    /// The columns the first migration made (those of ``DownloadColumn`` through `segments`; later ones come with
    /// their migrations).
    private static let firstColumns = DownloadColumn.allCases.prefix { $0 != .owner }

    /// Shipped migrations are never edited; changes come as new ones (and a case in ``DownloadColumn``).
    private static let migrations: [(name: String, sql: String)] = [
        (
            "v1: downloads with leases",
            """
            CREATE TABLE \(table) (
                id BIGSERIAL PRIMARY KEY,
                \(firstColumns.dropFirst().map { "\($0.rawValue) \(type(of: $0))" }.joined(separator: ",\n    ")),
                leaseOwner TEXT,
                leaseExpires TIMESTAMPTZ
            );
            CREATE INDEX \(table)_on_updatedAt ON \(table) (updatedAt);
            CREATE INDEX \(table)_on_leaseOwner ON \(table) (leaseOwner);
            CREATE FUNCTION \(table)_notify() RETURNS trigger AS $$
            BEGIN PERFORM pg_notify('\(channel)', ''); RETURN NULL; END;
            $$ LANGUAGE plpgsql;
            CREATE TRIGGER \(table)_changed AFTER INSERT OR UPDATE OR DELETE ON \(table)
                FOR EACH STATEMENT EXECUTE FUNCTION \(table)_notify();
            """
        ),
        (
            "v2: connections per host across workers",
            """
            ALTER TABLE \(table) ADD COLUMN leaseHost TEXT, ADD COLUMN leaseConnections BIGINT;
            CREATE INDEX \(table)_on_leaseHost ON \(table) (leaseHost) WHERE leaseHost IS NOT NULL;
            """
        ),
        (
            "v3: a claim in one round trip",
            """
            CREATE FUNCTION \(table)_take_share(
                d_id BIGINT, d_owner TEXT, d_host TEXT, wanted BIGINT, lim BIGINT, lease_ms BIGINT, taking BOOLEAN
            ) RETURNS BIGINT AS $$
            DECLARE
                used BIGINT;
                granted BIGINT;
            BEGIN
                IF taking THEN
                    PERFORM 1 FROM \(table)
                    WHERE id = d_id AND state IN ('\(DownloadState.queued.rawValue)', '\(DownloadState.running.rawValue)')
                        AND (leaseOwner IS NULL OR leaseOwner = d_owner OR leaseExpires < now())
                    FOR UPDATE SKIP LOCKED;
                    IF NOT FOUND THEN RETURN -1; END IF;
                END IF;
                PERFORM pg_advisory_xact_lock(hashtext('haul-host ' || d_host));
                SELECT COALESCE(SUM(leaseConnections), 0) INTO used FROM \(table)
                WHERE leaseHost = d_host AND leaseOwner IS NOT NULL AND leaseExpires >= now() AND id <> d_id;
                IF used >= lim THEN RETURN 0; END IF;
                UPDATE \(table) AS d
                SET leaseOwner = d_owner, leaseExpires = now() + lease_ms * interval '1 millisecond',
                    leaseHost = d_host,
                    leaseConnections = GREATEST(
                        CASE WHEN d.leaseOwner = d_owner THEN COALESCE(d.leaseConnections, 0) ELSE 0 END,
                        LEAST(wanted, lim - used))
                WHERE d.id = d_id
                    AND (d.leaseOwner = d_owner OR (taking AND (d.leaseOwner IS NULL OR d.leaseExpires < now())))
                RETURNING d.leaseConnections INTO granted;
                IF NOT FOUND THEN RETURN -1; END IF;
                RETURN granted;
            END;
            $$ LANGUAGE plpgsql VOLATILE;
            """
        ),
        (
            // The columns are listed as they are at v4: a migration that adds one recreates this trigger with it.
            "v4: no notification for a change of lease alone",
            """
            DROP TRIGGER \(table)_changed ON \(table);
            CREATE TRIGGER \(table)_changed AFTER INSERT OR DELETE ON \(table)
                FOR EACH STATEMENT EXECUTE FUNCTION \(table)_notify();
            CREATE TRIGGER \(table)_updated AFTER UPDATE OF
                url, requestedDestination, destinationPath, options, state, createdAt, updatedAt, startedAt,
                completedAt, errorCode, errorSummary, errorSuggestion, errorTransient, errorHTTPStatus, hasPartData,
                generation, durableBytes, bootID, etag, lastModified, totalBytes, contentEncoding, finalURL,
                finalizing, segments
                ON \(table) FOR EACH STATEMENT EXECUTE FUNCTION \(table)_notify();
            """
        ),
        (
            // take_share for many downloads, counting each host's live connections once, not once per download.
            // A row's own live lease (this owner's, claimed again) is in that count: it is taken out before the
            // download's grant is worked out, as take_share leaves the row out of its count.
            "v5: claims together, each host counted once",
            """
            CREATE FUNCTION \(table)_take_shares(
                d_owner TEXT, lease_ms BIGINT, ids BIGINT[], hosts TEXT[], wanted BIGINT[], lims BIGINT[]
            ) RETURNS BIGINT[] AS $$
            DECLARE
                results BIGINT[] := '{}';
                counted TEXT[] := '{}';
                used_by BIGINT[] := '{}';
                k INT;
                used BIGINT;
                counted_prior BIGINT;
                own_prior BIGINT;
                granted BIGINT;
            BEGIN
                FOR i IN 1..coalesce(array_length(ids, 1), 0) LOOP
                    SELECT CASE WHEN leaseOwner IS NOT NULL AND leaseExpires >= now() AND leaseHost = hosts[i]
                                THEN COALESCE(leaseConnections, 0) ELSE 0 END,
                           CASE WHEN leaseOwner = d_owner THEN COALESCE(leaseConnections, 0) ELSE 0 END
                    INTO counted_prior, own_prior
                    FROM \(table)
                    WHERE id = ids[i] AND state IN ('\(DownloadState.queued.rawValue)', '\(DownloadState.running.rawValue)')
                        AND (leaseOwner IS NULL OR leaseOwner = d_owner OR leaseExpires < now())
                    FOR UPDATE SKIP LOCKED;
                    IF NOT FOUND THEN
                        results := results || (-1)::BIGINT;
                        CONTINUE;
                    END IF;
                    k := array_position(counted, hosts[i]);
                    IF k IS NULL THEN
                        PERFORM pg_advisory_xact_lock(hashtext('haul-host ' || hosts[i]));
                        SELECT COALESCE(SUM(leaseConnections), 0) INTO used FROM \(table)
                        WHERE leaseHost = hosts[i] AND leaseOwner IS NOT NULL AND leaseExpires >= now();
                        counted := counted || hosts[i];
                        used_by := used_by || used;
                        k := array_length(counted, 1);
                    END IF;
                    used := used_by[k] - counted_prior;
                    IF used >= lims[i] THEN
                        results := results || 0::BIGINT;
                        CONTINUE;
                    END IF;
                    granted := GREATEST(own_prior, LEAST(wanted[i], lims[i] - used));
                    UPDATE \(table)
                    SET leaseOwner = d_owner, leaseExpires = now() + lease_ms * interval '1 millisecond',
                        leaseHost = hosts[i], leaseConnections = granted
                    WHERE id = ids[i];
                    used_by[k] := used + granted;
                    results := results || granted;
                END LOOP;
                RETURN results;
            END;
            $$ LANGUAGE plpgsql VOLATILE;
            """
        ),
        (
            // The update trigger names every column but the id, from ``DownloadColumn`` (a migration that adds a
            // column recreates it the same way, so no column is left out of the notifications).
            "v6: owners and fingerprints",
            """
            ALTER TABLE \(table) ADD COLUMN owner TEXT, ADD COLUMN fileSize BIGINT, ADD COLUMN fileModified BIGINT,
                ADD COLUMN fileIdentity TEXT, ADD COLUMN sha256 TEXT;
            \(updateTrigger(through: .sha256))
            """
        ),
        (
            "v7: what a completed file was verified against",
            """
            ALTER TABLE \(table) ADD COLUMN verification TEXT;
            \(updateTrigger(through: .verification))
            """
        ),
    ]

    /// Recreates the trigger that announces a change to a record's own columns (every column of ``DownloadColumn``
    /// but the id, through `last`: those a migration's table has; a claim, renewal or release alone changes only the
    /// lease columns and is not announced).
    private static func updateTrigger(through last: DownloadColumn) -> String {
        let all = DownloadColumn.allCases
        let columns = all[...all.firstIndex(of: last)!].filter { $0 != .id }.map(\.rawValue).joined(separator: ", ")
        return """
            DROP TRIGGER \(table)_updated ON \(table);
            CREATE TRIGGER \(table)_updated AFTER UPDATE OF \(columns)
                ON \(table) FOR EACH STATEMENT EXECUTE FUNCTION \(table)_notify();
            """
    }

    /// Applies the migrations not yet applied (one worker at a time: an advisory lock), then checks that the table
    /// has ``DownloadColumn``'s columns, in order, with their types.
    private func migrate() throws(DownloadError) {
        try transaction { send throws(DownloadError) in
            _ = try send("SELECT pg_advisory_xact_lock(7212345)", [])
            _ = try send("CREATE TABLE IF NOT EXISTS haul_schema_migrations (name TEXT PRIMARY KEY)", [])
            let applied = Set(
                try send("SELECT name FROM haul_schema_migrations", []).rows.compactMap {
                    try? $0.makeRandomAccess()[0].decode(String.self)
                })
            let known = Set(Self.migrations.map(\.name))
            if let unknown = applied.subtracting(known).first {
                throw DownloadError.sharedDatabase(
                    location,
                    reason: "it was migrated by a newer version of Haul ('\(unknown)'), which this one "
                        + "(\(HaulVersion.current)) cannot use safely; use the newer haul")
            }
            for migration in Self.migrations where !applied.contains(migration.name) {
                for statement in Self.statements(migration.sql) { _ = try send(statement, []) }
                _ = try send("INSERT INTO haul_schema_migrations (name) VALUES ($1)", [.text(migration.name)])
            }
            let found = try send(
                """
                SELECT column_name, data_type FROM information_schema.columns
                WHERE table_name = '\(Self.table)' AND table_schema = current_schema() ORDER BY ordinal_position
                """, []
            ).rows.map { row -> String in
                let cells = row.makeRandomAccess()
                let name = (try? cells[0].decode(String.self)) ?? "?"
                let type = (try? cells[1].decode(String.self)) ?? "?"
                return "\(name) \(type)"
            }
            // The first migration's columns, the lease columns (v1, v2), then those added later, in order.
            let described = { (column: DownloadColumn) in
                "\(column.rawValue.lowercased()) \(Self.informationSchemaType(column))"
            }
            let expected =
                Self.firstColumns.map(described)
                + [
                    "leaseowner text", "leaseexpires timestamp with time zone", "leasehost text",
                    "leaseconnections bigint",
                ] + DownloadColumn.allCases.dropFirst(Self.firstColumns.count).map(described)
            guard found == expected else {
                throw DownloadError.sharedDatabase(
                    location,
                    reason: "its \(Self.table) table has the columns [\(found.joined(separator: ", "))], not the "
                        + "expected [\(expected.joined(separator: ", "))]; use the haul that made it")
            }
        }
    }

    private static func informationSchemaType(_ column: DownloadColumn) -> String {
        switch type(of: column) {
        case "BIGINT": "bigint"
        case "TIMESTAMPTZ": "timestamp with time zone"
        case "BOOLEAN": "boolean"
        default: "text"
        }
    }

    /// The statements of a migration, split at `;` outside `$$` bodies.
    private static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var inBody = false
        var rest = Substring(sql)
        while let first = rest.first {
            if rest.hasPrefix("$$") {
                inBody.toggle()
                current += "$$"
                rest = rest.dropFirst(2)
                continue
            }
            if first == ";", !inBody {
                statements.append(current)
                current = ""
            } else {
                current.append(first)
            }
            rest = rest.dropFirst()
        }
        statements.append(current)
        return statements.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
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

    // MARK: - Claims

    /// The lease's length as SQL.
    private var interval: String { "interval '\(Int(leaseTimeout.inSeconds * 1000)) milliseconds'" }

    /// Takes the lease, and a share of the host's connections: the lease records how many this worker may open
    /// (`leaseConnections`), and the live leases on one host never add up to more than `share.limit`. One round trip:
    /// the function `haul_download_take_shares` (migration v5) locks the row, then the host (an advisory lock, so two
    /// workers never both take the last connection), then counts the host's connections in a statement of its own
    /// (a fresh snapshot, so it sees every claim committed before the lock was taken).
    func claim(_ id: DownloadID, share: HostShare, viewToken: Int?) -> ClaimOutcome {
        claim([(id, share)], viewToken: viewToken)[0]
    }

    var claimsTogether: Bool { true }

    /// One round trip for all: `haul_download_take_shares` (migration v5) takes them in order, counting each host's
    /// live connections once (under its advisory lock, as a single claim does) and adding what it grants.
    func claim(_ requests: [(id: DownloadID, share: HostShare)], viewToken: Int?) -> [ClaimOutcome] {
        guard !requests.isEmpty else { return [] }
        var values: [StoredValue] = [.text(owner), .integer(Int64(leaseTimeout.inSeconds * 1000))]
        // Four arrays, one element per download each: ids, hosts, connections wanted, limits.
        var arrays: [[String]] = [[], [], [], []]
        for request in requests {
            for (index, value) in [
                StoredValue.integer(request.id.rawValue), .text(request.share.host),
                .integer(Int64(max(1, request.share.wanted))), .integer(Int64(request.share.limit)),
            ].enumerated() {
                values.append(value)
                arrays[index].append("$\(values.count)")
            }
        }
        let types = ["BIGINT", "TEXT", "BIGINT", "BIGINT"]
        let arguments = zip(arrays, types).map { "ARRAY[\($0.joined(separator: ", "))]::\($1)[]" }
        let granted =
            (try? run(
                "SELECT \(Self.table)_take_shares($1, $2, \(arguments.joined(separator: ", ")))", values, on: leases
            ).rows.first).flatMap { row in
                (try? row?.makeRandomAccess()[0].decode([Int64].self))?.map { Optional(Int($0)) }
            }
        // The database unreachable: refused, and the next tick tries again.
        guard let granted, granted.count == requests.count else {
            return Array(repeating: .refused, count: requests.count)
        }
        return zip(requests, granted).map { request, result in
            switch result {
            case nil: return .refused
            case let count? where count < 0: return .refused
            case 0: return .hostBusy
            case let count?:
                held.withLock { _ = $0.insert(request.id) }
                return .granted(connections: count)
            }
        }
    }

    /// `haul_download_take_share` (migration v3) for a download this worker holds: as many of `share.wanted` connections
    /// as the host has left, never fewer than its lease has; 1 when the database cannot be reached.
    func widenClaim(_ id: DownloadID, share: HostShare) -> Int {
        let rows = try? run(
            "SELECT \(Self.table)_take_share($1, $2, $3, $4, $5, $6, false)",
            [
                .integer(id.rawValue), .text(owner), .text(share.host), .integer(Int64(max(1, share.wanted))),
                .integer(Int64(share.limit)), .integer(Int64(leaseTimeout.inSeconds * 1000)),
            ], on: leases
        ).rows
        let granted = rows?.first.flatMap { try? $0.makeRandomAccess()[0].decode(Int64.self) }.map { Int($0) }
        return max(1, granted ?? 1)
    }

    /// One statement for all (a lease's column alone: nobody is notified), on the data connection, so it never
    /// takes the rows' locks in another order than a group's write running at the same time.
    func connectionsDone(_ ids: [DownloadID]) {
        guard !ids.isEmpty else { return }
        for chunk in Self.idChunks(ids) {
            _ = try? run(
                """
                UPDATE \(Self.table) SET leaseConnections = 0
                WHERE id IN (\(Self.placeholders(chunk.count, from: 2))) AND leaseOwner = $1
                """, [.text(owner)] + chunk)
        }
    }

    /// No round trip for a download this worker does not hold (its completion gave the lease up already).
    func release(_ id: DownloadID) {
        guard held.withLock({ $0.remove(id) }) != nil else { return }
        _ = try? run(
            """
            UPDATE \(Self.table) SET leaseOwner = NULL, leaseExpires = NULL, leaseHost = NULL, leaseConnections = NULL
            WHERE id = $1 AND leaseOwner = $2
            """, [.integer(id.rawValue), .text(owner)], on: leases)
    }

    func claimedElsewhere(_ ids: [DownloadID]) -> Set<DownloadID> {
        var claimed: Set<DownloadID> = []
        for chunk in Self.idChunks(ids) {
            let rows = try? run(
                """
                SELECT id FROM \(Self.table)
                WHERE id IN (\(Self.placeholders(chunk.count, from: 2))) AND leaseOwner IS NOT NULL
                    AND leaseOwner <> $1 AND leaseExpires >= now()
                """, [.text(owner)] + chunk
            ).rows
            for row in rows ?? [] {
                if let id = try? row.makeRandomAccess()[0].decode(Int64.self) {
                    claimed.insert(DownloadID(rawValue: id))
                }
            }
        }
        return claimed
    }

    func claimHolders() throws(DownloadError) -> [DownloadID: String] {
        var holders: [DownloadID: String] = [:]
        for row in try run(
            "SELECT id, leaseOwner FROM \(Self.table) WHERE leaseOwner IS NOT NULL AND leaseExpires >= now()"
        ).rows {
            let cells = row.makeRandomAccess()
            guard let id = try? cells[0].decode(Int64.self), let owner = try? cells[1].decode(String.self) else {
                continue
            }
            holders[DownloadID(rawValue: id)] = owner
        }
        return holders
    }

    /// Stops renewing this worker's leases: they run out after ``leaseTimeout`` (what a worker that dies does).
    func stopRenewingLeases() {
        heartbeatStopped.store(true, ordering: .relaxed)
    }

    /// The downloads whose lease this worker lost (it ran out and another worker took it), since the last call.
    func lostClaims() -> Set<DownloadID> {
        lost.withLock { lost in
            defer { lost = [] }
            return lost
        }
    }
    private let lost = Mutex<Set<DownloadID>>([])

    /// Renews the leases this worker holds; the ones another worker took meanwhile are lost.
    private func renewLeases() {
        let mine = held.withLock { $0 }
        guard !mine.isEmpty else { return }
        guard
            let rows = try? run(
                """
                UPDATE \(Self.table) SET leaseExpires = now() + \(interval)
                WHERE leaseOwner = $1 RETURNING id
                """, [.text(owner)], on: leases
            ).rows
        else { return }  // The database is unreachable: the leases run out, and the next renewal tells.
        let renewed = Set(
            rows.compactMap { try? $0.makeRandomAccess()[0].decode(Int64.self) }.map(DownloadID.init(rawValue:)))
        let gone = mine.subtracting(renewed)
        guard !gone.isEmpty else { return }
        held.withLock { $0.subtract(gone) }
        lost.withLock { $0.formUnion(gone) }
        logger.warning("leases lost to another worker", metadata: ["downloads": "\(gone.map(\.rawValue).sorted())"])
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
