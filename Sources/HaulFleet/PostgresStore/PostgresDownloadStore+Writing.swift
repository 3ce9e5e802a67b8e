import Foundation
import HaulKit
import PostgresNIO

/// The writes: inserts, the batched updates of each kind of column, checkpoints and deletions.
extension PostgresDownloadStore {
    /// One record: one `INSERT … RETURNING id`. More: their ids taken from the table's sequence in one query, in
    /// order, then `INSERT`s of many rows each, in one transaction.
    nonisolated(nonsending) func insert(
        _ records: consuming [DownloadRecord]
    ) async throws(DownloadError) -> [DownloadRecord] {
        var records = records
        guard !records.isEmpty else { return [] }
        var encoder = DownloadRecordEncoder()
        if records.count == 1 {
            let statement = try writer.insertReturningID(records[0], encoder: &encoder)
            let row = try await run(statement.sql, statement.values).rows.first
            records[0].id = try? row?.makeRandomAccess()[0].decode(Int64.self)
            return records
        }
        let unnumbered = records
        records = try await transaction { send throws(DownloadError) in
            var records = unnumbered
            let ids = try await send(
                """
                SELECT nextval(pg_get_serial_sequence('\(Self.table)', 'id')) FROM generate_series(1, $1) ORDER BY 1
                """, [.integer(Int64(records.count))]
            ).rows.map { try? $0.makeRandomAccess()[0].decode(Int64.self) }
            guard ids.count == records.count, !ids.contains(nil) else {
                throw DownloadError.sharedDatabase(location, reason: "it gave \(ids.count) ids for \(records.count)")
            }
            for index in records.indices { records[index].id = ids[index] }
            var encoder = DownloadRecordEncoder()
            for statement in try writer.inserts(records, encoder: &encoder) {
                _ = try await send(statement.sql, statement.values)
            }
            return records
        }
        return records
    }

    nonisolated(nonsending) func saveLifecycle(_ records: [DownloadRecord]) async throws(DownloadError) {
        try await update(PostgresBatchedWrite.updates(DownloadColumn.lifecycle, records, rule: .releasingCompleted))
    }

    nonisolated(nonsending) func recordRunning(_ records: [DownloadRecord]) async throws(DownloadError) {
        let now = Date()
        let started = records.map { record in
            var record = record
            record.updatedAt = now
            return record
        }
        try await update(PostgresBatchedWrite.updates([.startedAt, .updatedAt], started, rule: .startingQueued))
    }

    nonisolated(nonsending) func saveSettings(_ record: DownloadRecord) async throws(DownloadError) {
        try await update(PostgresBatchedWrite.updates(DownloadColumn.settings, [record], rule: .any))
    }

    nonisolated(nonsending) func saveTransfers(_ records: [DownloadRecord]) async throws(DownloadError) {
        try await update(PostgresBatchedWrite.updates(DownloadColumn.job, records, rule: .unleasedOrOwner))
    }

    nonisolated(nonsending) func saveLifecycleAndTransfers(
        lifecycle: [DownloadRecord], transfers: [DownloadRecord]
    ) async throws(DownloadError) {
        try await update(
            PostgresBatchedWrite.updates(DownloadColumn.lifecycle, lifecycle, rule: .releasingCompleted)
                + PostgresBatchedWrite.updates(DownloadColumn.job, transfers, rule: .unleasedOrOwner))
    }

    /// Sends `updates` so that all or none take effect: one statement when they fit in one (no `BEGIN` and
    /// `COMMIT`: a statement is atomic by itself), else a transaction. A download recorded completed has given up
    /// its lease in the same statement, so its claim needs no release of its own.
    private nonisolated(nonsending) func update(_ updates: [PostgresBatchedWrite.Update]) async throws(DownloadError) {
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
    nonisolated(nonsending) func checkpoint(
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

    nonisolated(nonsending) func distrustUnsyncedBytes(_ id: DownloadID) async throws(DownloadError) {
        try await run("UPDATE \(Self.table) SET bootID = NULL WHERE id = $1", [.integer(id.rawValue)])
    }

    nonisolated(nonsending) func delete(_ ids: [DownloadID]) async throws(DownloadError) {
        guard !ids.isEmpty else { return }
        try await transaction { send throws(DownloadError) in
            for chunk in Self.idChunks(ids) {
                _ = try await send(
                    "DELETE FROM \(Self.table) WHERE id IN (\(SQLDialect.postgres.parameters(chunk.count)))", chunk)
            }
        }
    }
}
