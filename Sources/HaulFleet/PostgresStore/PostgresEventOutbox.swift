import Foundation
import HaulKit
import PostgresNIO

/// The shared queue's ``EventOutbox``: the `haul_event_outbox` table, filled by a trigger on the download table in
/// the transaction of each state change, for the targets the writing worker's session names.
///
/// Every worker with hooks or webhooks delivers from it, and each row once for the fleet: a worker leases the rows it
/// takes (`FOR UPDATE SKIP LOCKED`, so workers never wait on each other); a worker that dies leaves them to another
/// when the lease ends. Rows of one download and target go in order: a row is taken only when no older one of its
/// download and target is left. Its statements take a pool connection at once, not the turn of the records' writes:
/// a row is settled as soon as its delivery is, and a worker killed then has as few rows delivered and not settled
/// (delivered again by another) as can be.
final class PostgresEventOutbox: EventOutbox {
    static let table = "haul_event_outbox"
    private let store: PostgresDownloadStore

    /// Migration v8: the table, and the trigger that fills it.
    static let migration = """
        CREATE TABLE \(table) (
            seq BIGSERIAL PRIMARY KEY,
            eventID TEXT NOT NULL,
            target TEXT NOT NULL,
            downloadID BIGINT NOT NULL,
            event TEXT NOT NULL,
            url TEXT NOT NULL,
            file TEXT,
            size BIGINT,
            sha256 TEXT,
            errorCode BIGINT,
            error TEXT,
            createdAt TIMESTAMPTZ NOT NULL DEFAULT now(),
            attempts BIGINT NOT NULL DEFAULT 0,
            nextAttempt TIMESTAMPTZ NOT NULL DEFAULT now(),
            leaseOwner TEXT,
            leaseExpires TIMESTAMPTZ,
            lastError TEXT
        );
        CREATE INDEX \(table)_by_download ON \(table) (downloadID, target, seq);
        CREATE FUNCTION \(table)_record() RETURNS trigger AS $$
        DECLARE
            targets TEXT := current_setting('haul.event_targets', true);
            kind TEXT;
            rec RECORD;
            event_id TEXT;
            line TEXT;
            parts TEXT[];
        BEGIN
            IF targets IS NULL OR targets = '' THEN RETURN NULL; END IF;
            IF TG_OP = 'DELETE' THEN
                rec := OLD;
                IF OLD.state NOT IN (\(stoppable)) THEN RETURN NULL; END IF;
                kind := 'stop';
            ELSE
                rec := NEW;
                IF OLD.state IS NOT DISTINCT FROM NEW.state THEN RETURN NULL; END IF;
                kind := CASE NEW.state \(kinds) ELSE NULL END;
                IF kind IS NULL THEN RETURN NULL; END IF;
            END IF;
            event_id := replace(gen_random_uuid()::text, '-', '');
            FOREACH line IN ARRAY string_to_array(targets, E'\\n') LOOP
                parts := string_to_array(line, E'\\t');
                IF kind = ANY (string_to_array(parts[1], ',')) THEN
                    INSERT INTO \(table) (eventID, target, downloadID, event, url, file, size, sha256, errorCode, error)
                    VALUES (event_id, parts[2], rec.id, kind, rec.url, rec.destinationPath,
                        coalesce(rec.fileSize, rec.totalBytes), rec.sha256, rec.errorCode, rec.errorSummary);
                END IF;
            END LOOP;
            RETURN NULL;
        END;
        $$ LANGUAGE plpgsql;
        CREATE TRIGGER \(PostgresDownloadStore.table)_events AFTER UPDATE OF state OR DELETE
            ON \(PostgresDownloadStore.table) FOR EACH ROW EXECUTE FUNCTION \(table)_record();
        """

    private static let stoppable = OutboxEventKind.stoppableStates.map { "'\($0.rawValue)'" }.joined(separator: ", ")
    private static let kinds = DownloadState.allCases.compactMap { state in
        OutboxEventKind.reporting(state).map { "WHEN '\(state.rawValue)' THEN '\($0.rawValue)'" }
    }.joined(separator: " ")

    /// The session setting the trigger reads: one line per target, `KIND,KIND<TAB>NAME`.
    static func setting(_ targets: [EventTarget]) -> String {
        targets.map { target in
            let kinds = OutboxEventKind.allCases.filter(target.kinds.contains).map(\.rawValue)
            return kinds.joined(separator: ",") + "\t" + target.name
        }.joined(separator: "\n")
    }

    /// Names `targets` in every session of the store (each connection of its pool carries them before its next
    /// statement).
    init(store: PostgresDownloadStore, targets: [EventTarget]) {
        self.store = store
        store.session.useEventTargets(Self.setting(targets))
    }

    nonisolated(nonsending) func dueEvents(
        targets: [String], limit: Int, lease: Duration, excluding: Set<Int64>
    ) async throws(DownloadError)
        -> [OutboxEvent]
    {
        guard !targets.isEmpty, limit > 0 else { return [] }
        let result = try await store.run(
            """
            UPDATE \(Self.table) SET leaseOwner = $1, leaseExpires = now() + $2 * interval '1 millisecond'
            WHERE seq IN (
                SELECT seq FROM \(Self.table) o
                WHERE target = ANY (string_to_array($3, E'\\n')) AND nextAttempt <= now()
                AND (leaseExpires IS NULL OR leaseExpires < now() OR leaseOwner = $1)
                AND NOT (seq = ANY (string_to_array($4, ',')::bigint[]))
                AND NOT EXISTS (
                    SELECT 1 FROM \(Self.table) p
                    WHERE p.downloadID = o.downloadID AND p.target = o.target AND p.seq < o.seq)
                ORDER BY seq LIMIT $5
                FOR UPDATE SKIP LOCKED)
            RETURNING seq, eventID, target, downloadID, event, url, file, size, sha256, errorCode, error, createdAt,
                attempts
            """,
            [
                .text(store.owner), .integer(Int64(lease.inSeconds * 1000)), .text(targets.joined(separator: "\n")),
                .text(excluding.map(String.init).joined(separator: ",")), .integer(Int64(limit)),
            ], inOrder: false)
        return result.rows.compactMap { row -> OutboxEvent? in
            let cells = row.makeRandomAccess()
            guard let kind = (try? cells[4].decode(String.self)).flatMap(OutboxEventKind.init(rawValue:)),
                let sequence = try? cells[0].decode(Int64.self), let id = try? cells[3].decode(Int64.self)
            else { return nil }
            return OutboxEvent(
                sequence: sequence, eventID: (try? cells[1].decode(String.self)) ?? "",
                target: (try? cells[2].decode(String.self)) ?? "", downloadID: DownloadID(rawValue: id), kind: kind,
                url: (try? cells[5].decode(String.self)) ?? "", file: try? cells[6].decode(String?.self),
                size: try? cells[7].decode(Int64?.self), sha256: try? cells[8].decode(String?.self),
                errorCode: (try? cells[9].decode(Int64?.self)).map(Int.init),
                error: try? cells[10].decode(String?.self),
                createdAt: (try? cells[11].decode(Date.self)) ?? Date(),
                attempts: Int((try? cells[12].decode(Int64.self)) ?? 0))
        }.sorted { $0.sequence < $1.sequence }
    }

    nonisolated(nonsending) func settle(_ sequence: Int64) async throws(DownloadError) {
        try await store.run("DELETE FROM \(Self.table) WHERE seq = $1", [.integer(sequence)], inOrder: false)
    }

    nonisolated(nonsending) func postpone(
        _ sequence: Int64, attempts: Int, next: Date, reason: String
    ) async throws(DownloadError) {
        try await store.run(
            """
            UPDATE \(Self.table) SET attempts = $1, nextAttempt = $2, lastError = $3, leaseOwner = NULL,
                leaseExpires = NULL
            WHERE seq = $4
            """, [.integer(Int64(attempts)), .date(next), .text(reason), .integer(sequence)], inOrder: false)
    }

    nonisolated(nonsending) func depth() async throws(DownloadError) -> Int {
        let rows = try await store.run("SELECT count(*) FROM \(Self.table)", inOrder: false).rows
        return Int((try? rows.first?.makeRandomAccess()[0].decode(Int64.self)) ?? 0)
    }

    nonisolated(nonsending) func pending(targets: [String]) async throws(DownloadError) -> Int {
        let rows = try await store.run(
            "SELECT count(*) FROM \(Self.table) WHERE target = ANY (string_to_array($1, E'\\n'))",
            [.text(targets.joined(separator: "\n"))], inOrder: false
        ).rows
        return Int((try? rows.first?.makeRandomAccess()[0].decode(Int64.self)) ?? 0)
    }

    nonisolated(nonsending) func close() async {
        _ = try? await store.run(
            "UPDATE \(Self.table) SET leaseOwner = NULL, leaseExpires = NULL WHERE leaseOwner = $1",
            [.text(store.owner)], inOrder: false)
    }
}

extension PostgresDownloadStore {
    nonisolated(nonsending) func enableOutbox(for targets: [EventTarget]) async throws(DownloadError) -> any EventOutbox
    {
        PostgresEventOutbox(store: self, targets: targets)
    }
}
