import HaulKit
import Logging
import PostgresNIO

/// The trigger that announces a change to a record's own columns (`haul_download_updated`), derived from
/// ``DownloadColumn`` rather than only migrated: every open checks the columns it names and recreates it when they
/// are not every column but the id. A migration that adds a column and forgets the trigger cannot leave that column's
/// writes unannounced (the other workers would never read them).
extension PostgresDownloadStore {
    /// The trigger's name.
    static let updateTriggerName = "\(table)_updated"

    /// The columns whose update is announced: every column of ``DownloadColumn`` but the id. A claim, a renewal or a
    /// release alone changes only the lease columns, which are not among them, and is not announced.
    static let notifiedColumns = DownloadColumn.allCases.filter { $0 != .id }.map(\.rawValue)

    /// The SQL that (re)creates the trigger on `columns`: one statement-level notification per `UPDATE` that sets one
    /// of them. The migrations that add a column and the repair at open both use it.
    static func updateTrigger(on columns: [String]) -> String {
        """
        DROP TRIGGER IF EXISTS \(updateTriggerName) ON \(table);
        CREATE TRIGGER \(updateTriggerName) AFTER UPDATE OF \(columns.joined(separator: ", "))
            ON \(table) FOR EACH STATEMENT EXECUTE FUNCTION \(table)_notify();
        """
    }

    /// The columns the trigger names in the database, in lower case (PostgreSQL folds unquoted names), sorted; empty
    /// when there is no such trigger.
    static nonisolated(nonsending) func updateTriggerColumns(_ send: Send) async throws(DownloadError) -> [String] {
        try await send(
            """
            SELECT a.attname::text FROM pg_trigger t
            JOIN pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = ANY (t.tgattr)
            WHERE t.tgrelid = '\(table)'::regclass AND t.tgname = '\(updateTriggerName)'
            """, []
        ).rows.compactMap { try? $0.makeRandomAccess()[0].decode(String.self) }.sorted()
    }

    /// Recreates the trigger on `columns` when it names other columns (or is missing), in `send`'s transaction (the
    /// migration's, under its lock). Returns whether it did.
    @discardableResult
    nonisolated(nonsending) func repairUpdateTrigger(
        on columns: [String] = notifiedColumns, _ send: Send
    ) async throws(DownloadError) -> Bool {
        let found = try await Self.updateTriggerColumns(send)
        let expected = columns.map { $0.lowercased() }.sorted()
        guard found != expected else { return false }
        logger.notice(
            "the update trigger named the wrong columns; recreated",
            metadata: [
                "found": "\(found.joined(separator: ", "))",
                "missing": "\(Set(expected).subtracting(found).sorted().joined(separator: ", "))",
            ])
        for statement in Self.statements(Self.updateTrigger(on: columns)) { _ = try await send(statement, []) }
        return true
    }
}
