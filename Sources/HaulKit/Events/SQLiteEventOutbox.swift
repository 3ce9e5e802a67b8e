import Foundation
import GRDB

/// The embedded store's ``EventOutbox``: the `event_outbox` table of the state database, filled by temporary
/// triggers on the writer's connection (so only a process with hooks or webhooks pays for them, and each records the
/// changes it makes itself).
///
/// One process at a time delivers to a target: it holds that target's lock (a byte-range lock the kernel drops when
/// the process dies), so rows need no lease; a process that finds the lock taken leaves the rows to the holder, and
/// takes over when the holder is gone.
final class SQLiteEventOutbox: EventOutbox {
    private let database: DatabasePool
    private let path: String
    /// One lock per target (``lockID(_:)``): the targets whose lock this process holds are its to deliver.
    private let locks: DownloadLocks

    /// The table (migration v8).
    static let tableDefinition = """
        CREATE TABLE event_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            eventID TEXT NOT NULL,
            target TEXT NOT NULL,
            downloadID INTEGER NOT NULL,
            event TEXT NOT NULL,
            url TEXT NOT NULL,
            file TEXT,
            size INTEGER,
            sha256 TEXT,
            errorCode INTEGER,
            error TEXT,
            createdAt REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            nextAttempt REAL NOT NULL,
            lastError TEXT
        );
        CREATE INDEX event_outbox_by_download ON event_outbox (downloadID, target, seq);
        """

    /// SQLite's time now, in seconds since 1970.
    private static let now = "((julianday('now') - 2440587.5) * 86400.0)"

    init(database: DatabasePool, path: String, targets: [EventTarget]) throws(DownloadError) {
        self.database = database
        self.path = path
        locks = try DownloadLocks(path: path + "-outbox-locks")
        do {
            try database.writeWithoutTransaction { db in
                for statement in Self.triggers(targets) { try db.execute(sql: statement) }
            }
        } catch {
            throw StateDatabaseFailure.error(error, path: path, doing: "cannot record events")
        }
    }

    /// The temporary triggers that record `targets`' events: one per kind of event some target takes. Its first
    /// statement makes the event's id; the others copy it (`last_insert_rowid()` is the trigger's own last row).
    static func triggers(_ targets: [EventTarget]) -> [String] {
        OutboxEventKind.allCases.compactMap { kind -> String? in
            let takers = targets.filter { $0.kinds.contains(kind) }
            guard !takers.isEmpty else { return nil }
            let row = kind == .stop ? "OLD" : "NEW"
            let condition: String
            let event: String
            if kind == .stop {
                let states = OutboxEventKind.stoppableStates.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                condition = "OLD.state IN (\(states))"
                event = "AFTER DELETE ON main.download"
            } else {
                let state = DownloadState.allCases.first { OutboxEventKind.reporting($0) == kind }!
                condition = "NEW.state = '\(state.rawValue)' AND OLD.state IS NOT NEW.state"
                event = "AFTER UPDATE OF state ON main.download"
            }
            let columns =
                "eventID, target, downloadID, event, url, file, size, sha256, errorCode, error, createdAt, nextAttempt"
            var statements = [
                """
                INSERT INTO event_outbox (\(columns)) VALUES (lower(hex(randomblob(16))), \(quoted(takers[0].name)), \
                \(row).id, '\(kind.rawValue)', \(row).url, \(row).destinationPath, \
                coalesce(\(row).fileSize, \(row).totalBytes), \(row).sha256, \(row).errorCode, \(row).errorSummary, \
                \(now), \(now));
                """
            ]
            for taker in takers.dropFirst() {
                statements.append(
                    """
                    INSERT INTO event_outbox (\(columns)) SELECT eventID, \(quoted(taker.name)), downloadID, event, \
                    url, file, size, sha256, errorCode, error, createdAt, nextAttempt FROM event_outbox \
                    WHERE seq = last_insert_rowid();
                    """)
            }
            return """
                CREATE TEMP TRIGGER IF NOT EXISTS haul_event_\(kind.rawValue) \(event) WHEN \(condition)
                BEGIN
                \(statements.joined(separator: "\n"))
                END
                """
        }
    }

    /// `text` as an SQL string literal.
    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// The lock byte of a target: a stable hash of its name (FNV-1a), above the download ids' usual range.
    static func lockID(_ target: String) -> DownloadID {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in target.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return DownloadID(rawValue: Int64(hash & 0x3fff_ffff_ffff) + (1 << 46))
    }

    nonisolated(nonsending) func dueEvents(
        targets: [String], limit: Int, lease: Duration, excluding: Set<Int64>
    ) async throws(DownloadError)
        -> [OutboxEvent]
    {
        let mine = targets.filter { locks.tryLock(Self.lockID($0)) }
        guard !mine.isEmpty, limit > 0 else { return [] }
        let marks = mine.map { _ in "?" }.joined(separator: ", ")
        let skipped = excluding.isEmpty ? "" : "AND seq NOT IN (\(excluding.map(String.init).joined(separator: ", ")))"
        do {
            return try await database.awaitingRead { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT seq, eventID, target, downloadID, event, url, file, size, sha256, errorCode, error,
                            createdAt, attempts
                        FROM event_outbox o
                        WHERE target IN (\(marks)) AND nextAttempt <= \(Self.now) \(skipped)
                        AND NOT EXISTS (
                            SELECT 1 FROM event_outbox p
                            WHERE p.downloadID = o.downloadID AND p.target = o.target AND p.seq < o.seq)
                        ORDER BY seq LIMIT \(limit)
                        """, arguments: StatementArguments(mine)
                ).compactMap(Self.event)
            }
        } catch {
            throw StateDatabaseFailure.error(error, path: path, doing: "cannot read the event outbox")
        }
    }

    private static func event(_ row: Row) -> OutboxEvent? {
        guard let kind = OutboxEventKind(rawValue: row["event"]) else { return nil }
        let created: Double = row["createdAt"]
        return OutboxEvent(
            sequence: row["seq"], eventID: row["eventID"], target: row["target"],
            downloadID: DownloadID(rawValue: row["downloadID"]), kind: kind, url: row["url"], file: row["file"],
            size: row["size"], sha256: row["sha256"], errorCode: row["errorCode"], error: row["error"],
            createdAt: Date(timeIntervalSince1970: created), attempts: row["attempts"])
    }

    nonisolated(nonsending) func settle(_ sequence: Int64) async throws(DownloadError) {
        try await write { db in try db.execute(sql: "DELETE FROM event_outbox WHERE seq = ?", arguments: [sequence]) }
    }

    nonisolated(nonsending) func postpone(
        _ sequence: Int64, attempts: Int, next: Date, reason: String
    ) async throws(DownloadError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE event_outbox SET attempts = ?, nextAttempt = ?, lastError = ? WHERE seq = ?",
                arguments: [attempts, next.timeIntervalSince1970, reason, sequence])
        }
    }

    nonisolated(nonsending) func depth() async throws(DownloadError) -> Int {
        do {
            return try await database.awaitingRead { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM event_outbox") ?? 0
            }
        } catch {
            throw StateDatabaseFailure.error(error, path: path, doing: "cannot read the event outbox")
        }
    }

    nonisolated(nonsending) func pending(targets: [String]) async throws(DownloadError) -> Int {
        guard !targets.isEmpty else { return 0 }
        let marks = targets.map { _ in "?" }.joined(separator: ", ")
        do {
            return try await database.awaitingRead { db in
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM event_outbox WHERE target IN (\(marks))",
                    arguments: StatementArguments(targets)) ?? 0
            }
        } catch {
            throw StateDatabaseFailure.error(error, path: path, doing: "cannot read the event outbox")
        }
    }

    nonisolated(nonsending) func close() async {
        locks.unlockAll()
    }

    private nonisolated(nonsending) func write(
        _ body: @escaping @Sendable (Database) throws -> Void
    ) async throws(DownloadError) {
        do {
            try await database.awaitingWrite(body)
        } catch {
            throw StateDatabaseFailure.error(error, path: path, doing: "cannot write the event outbox")
        }
    }
}
