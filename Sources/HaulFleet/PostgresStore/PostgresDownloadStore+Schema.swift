import Foundation
import HaulKit
import PostgresNIO

/// The shared table's schema: its migrations, never edited once shipped, and the check that they produce exactly the
/// table ``DownloadColumn`` defines.
extension PostgresDownloadStore {
    // MARK: - Schema

    /// The columns the first migration made (those of ``DownloadColumn`` through `segments`; later ones come with
    /// their migrations).
    private static let firstColumns = DownloadColumn.allCases.prefix { $0 != .owner }

    /// Shipped migrations are never edited; changes come as new ones (and a case in ``DownloadColumn``).
    static let migrations: [(name: String, sql: String)] = [
        (
            "v1: downloads with leases",
            """
            CREATE TABLE \(table) (
                id BIGSERIAL PRIMARY KEY,
                \(firstColumns.dropFirst().map { "\($0.rawValue) \(SQLDialect.postgres.type(of: $0))" }.joined(separator: ",\n    ")),
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
            // The update trigger names every column but the id, from ``DownloadColumn``. A migration that adds a
            // column may recreate it the same way; if it does not, the repair at every open does
            // (``repairUpdateTrigger(on:_:)``).
            "v6: owners and fingerprints",
            """
            ALTER TABLE \(table) ADD COLUMN owner TEXT, ADD COLUMN fileSize BIGINT, ADD COLUMN fileModified BIGINT,
                ADD COLUMN fileIdentity TEXT, ADD COLUMN sha256 TEXT;
            \(updateTrigger(on: triggerColumns(through: .sha256)))
            """
        ),
        (
            "v7: what a completed file was verified against",
            """
            ALTER TABLE \(table) ADD COLUMN verification TEXT;
            \(updateTrigger(on: triggerColumns(through: .verification)))
            """
        ),
        (
            // Rows are made only by a worker whose session names targets (`haul.event_targets`, set by
            // ``PostgresEventOutbox``): elsewhere the trigger returns at once.
            "v8: the event outbox",
            PostgresEventOutbox.migration
        ),
        ("v9: hosts' request schedules and backoff, shared by the fleet", hostBudgetMigration),
        // A worker's statements run on a pool's connections, whose server processes it does not know: a notification
        // names the writer's session instead (`application_name`, unique to each store), so the listener can tell
        // its own writes from others'. Workers of earlier versions, which tell by process, ignore the payload.
        (
            "v10: notifications name the writer's session",
            """
            CREATE OR REPLACE FUNCTION \(table)_notify() RETURNS trigger AS $$
            BEGIN PERFORM pg_notify('\(channel)', current_setting('application_name')); RETURN NULL; END;
            $$ LANGUAGE plpgsql;
            """
        ),
    ]

    /// The columns of the update trigger at a migration that added `last`: those of ``DownloadColumn`` but the id,
    /// through `last` (those that migration's table has).
    private static func triggerColumns(through last: DownloadColumn) -> [String] {
        let all = DownloadColumn.allCases
        return all[...all.firstIndex(of: last)!].filter { $0 != .id }.map(\.rawValue)
    }

    /// Applies the migrations not yet applied (one worker at a time: an advisory lock), then checks that the table
    /// has ``DownloadColumn``'s columns, in order, with their types, and that the update trigger names them all but the
    /// id (recreating it if not), in the same transaction.
    nonisolated(nonsending) func migrate() async throws(DownloadError) {
        try await transaction { send throws(DownloadError) in
            _ = try await send("SELECT pg_advisory_xact_lock(7212345)", [])
            _ = try await send("CREATE TABLE IF NOT EXISTS haul_schema_migrations (name TEXT PRIMARY KEY)", [])
            let applied = Set(
                try await send("SELECT name FROM haul_schema_migrations", []).rows.compactMap {
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
                for statement in Self.statements(migration.sql) { _ = try await send(statement, []) }
                _ = try await send("INSERT INTO haul_schema_migrations (name) VALUES ($1)", [.text(migration.name)])
            }
            let found = try await send(
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
            if let mismatch = DownloadColumn.mismatch(table: Self.table, found: found, expected: expected) {
                throw DownloadError.sharedDatabase(location, reason: mismatch + "; use the haul that made it")
            }
            try await repairUpdateTrigger(send)
        }
    }

    private static func informationSchemaType(_ column: DownloadColumn) -> String {
        switch SQLDialect.postgres.type(of: column) {
        case "BIGINT": "bigint"
        case "TIMESTAMPTZ": "timestamp with time zone"
        case "BOOLEAN": "boolean"
        default: "text"
        }
    }

    /// The statements of a migration, split at `;` outside `$$` bodies.
    static func statements(_ sql: String) -> [String] {
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

}
