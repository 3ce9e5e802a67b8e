import HaulKit

/// Statements that write many records in one round trip each, for ``PostgresDownloadStore``: a shared queue pays a
/// round trip per statement, so a group of small downloads is written as one `INSERT` or `UPDATE` of many rows, not
/// one statement per record inside `BEGIN` and `COMMIT`. The SQL is ``BatchedWriteSQL``'s, as SQLite's store writes
/// it; this adds PostgreSQL's limits, and the lease rules an update keeps.
struct PostgresBatchedWrite {
    /// SQL and the values of its parameters (`$1` is the first).
    struct Statement {
        var sql: String
        var values: [StoredValue]
    }

    /// Which rows an update may write, besides the one with the record's id.
    enum Rule: Equatable {
        /// Any.
        case any
        /// Rows no other worker holds (a job's columns: a worker that lost the lease writes nothing).
        case unleasedOrOwner
        /// Any; a row recorded `completed` by this owner gives up its lease in the same statement (a finished
        /// download needs none, and its host's connection is free for other workers at once).
        case releasingCompleted
        /// Rows still `queued`, which become `running` (a pause or removal another worker wrote is kept).
        case startingQueued
    }

    /// One update: `columns` of each record, under `rule`.
    struct Update {
        var columns: [DownloadColumn]
        var records: ArraySlice<DownloadRecord>
        var rule: Rule

        /// Parameters: one per column and the id for each record, and the owner where the rule names it.
        var parameterCount: Int { records.count * (columns.count + 1) + (rule.namesOwner ? 1 : 0) }
    }

    /// PostgreSQL's protocol counts a statement's parameters in 16 bits.
    static let maximumParameters = 65_535
    /// Records per statement at most, so that a statement's text stays a few hundred kilobytes.
    static let maximumRows = 1_000

    let table: String
    /// This worker's name in leases.
    let owner: String

    /// Records per statement for `columnCount` values each.
    static func rowsPerStatement(_ columnCount: Int) -> Int {
        min(maximumRows, (maximumParameters - 1) / columnCount)
    }

    /// An `INSERT` of `record` without its id: the table's sequence gives it, and the statement returns it.
    func insertReturningID(
        _ record: DownloadRecord, encoder: inout DownloadRecordEncoder
    ) throws(DownloadError) -> Statement {
        let columns = DownloadColumn.allCases.filter { $0 != .id }
        var values: [StoredValue] = []
        values.reserveCapacity(columns.count)
        try Self.append(columns, of: record, to: &values, encoder: &encoder)
        return Statement(
            sql: BatchedWriteSQL.insert(into: table, columns, rows: 1, dialect: .postgres) + " RETURNING id",
            values: values)
    }

    /// `INSERT` statements for `records`, whose ids are set: every column, as many rows each as the limits allow.
    func inserts(_ records: [DownloadRecord], encoder: inout DownloadRecordEncoder) throws(DownloadError) -> [Statement]
    {
        let columns = DownloadColumn.allCases
        var statements: [Statement] = []
        let rows = min(Self.maximumRows, Self.maximumParameters / columns.count)
        for start in stride(from: 0, to: records.count, by: rows) {
            let chunk = records[start..<min(records.count, start + rows)]
            var values: [StoredValue] = []
            values.reserveCapacity(chunk.count * columns.count)
            for record in chunk { try Self.append(columns, of: record, to: &values, encoder: &encoder) }
            let sql = BatchedWriteSQL.insert(into: table, columns, rows: chunk.count, dialect: .postgres)
            statements.append(Statement(sql: sql, values: values))
        }
        return statements
    }

    /// The updates that write `columns` of `records` under `rule`: the last record of each id only (PostgreSQL
    /// writes an arbitrary one of several rows that match one id), as many records per statement as the limits allow.
    static func updates(_ columns: [DownloadColumn], _ records: [DownloadRecord], rule: Rule) -> [Update] {
        let unique = BatchedWriteSQL.lastOfEachID(records)
        let rows = rowsPerStatement(columns.count + 1)
        return stride(from: 0, to: unique.count, by: rows).map { start in
            Update(columns: columns, records: unique[start..<min(unique.count, start + rows)], rule: rule)
        }
    }

    /// The statements for `updates`, so that all or none take effect: two updates of different records become one
    /// statement (the first in a `WITH`: a statement is atomic by itself); otherwise one statement each, which the
    /// caller runs in a transaction when there are several.
    func statements(_ updates: [Update], encoder: inout DownloadRecordEncoder) throws(DownloadError) -> [Statement] {
        if updates.count == 2, updates[0].parameterCount + updates[1].parameterCount <= Self.maximumParameters,
            Set(updates[0].records.map(\.id)).isDisjoint(with: updates[1].records.map(\.id))
        {
            let first = try statement(updates[0], from: 1, encoder: &encoder)
            let second = try statement(updates[1], from: 1 + first.values.count, encoder: &encoder)
            return [Statement(sql: "WITH first AS (\(first.sql)) \(second.sql)", values: first.values + second.values)]
        }
        var statements: [Statement] = []
        for update in updates { statements.append(try statement(update, from: 1, encoder: &encoder)) }
        return statements
    }

    /// ``BatchedWriteSQL``'s update for `update`, with its rule's assignments and conditions, its parameters
    /// numbered from `first`.
    func statement(
        _ update: Update, from first: Int, encoder: inout DownloadRecordEncoder
    ) throws(DownloadError)
        -> Statement
    {
        var values: [StoredValue] = []
        values.reserveCapacity(update.parameterCount)
        var next = first
        var ownerParameter = ""
        if update.rule.namesOwner {
            ownerParameter = "$\(next)::TEXT"
            values.append(.text(owner))
            next += 1
        }
        let rowColumns = [DownloadColumn.id] + update.columns
        for record in update.records {
            try Self.append(rowColumns, of: record, to: &values, encoder: &encoder)
        }
        var assignments: [String] = []
        var conditions: [String] = []
        switch update.rule {
        case .any:
            break
        case .unleasedOrOwner:
            conditions.append("(d.leaseOwner IS NULL OR d.leaseOwner = \(ownerParameter))")
        case .releasingCompleted:
            let state = BatchedWriteSQL.value(of: .state, among: update.columns)
            let releases = "\(state) = '\(DownloadState.completed.rawValue)' AND d.leaseOwner = \(ownerParameter)"
            for lease in ["leaseOwner", "leaseExpires", "leaseHost", "leaseConnections"] {
                assignments.append("\(lease) = CASE WHEN \(releases) THEN NULL ELSE d.\(lease) END")
            }
        case .startingQueued:
            assignments.append("state = '\(DownloadState.running.rawValue)'")
            conditions.append("d.state = '\(DownloadState.queued.rawValue)'")
        }
        let sql = BatchedWriteSQL.update(
            table, update.columns, rows: update.records.count, dialect: .postgres, from: next,
            assignments: assignments, conditions: conditions)
        return Statement(sql: sql, values: values)
    }

    private static func append(
        _ columns: [DownloadColumn], of record: DownloadRecord, to values: inout [StoredValue],
        encoder: inout DownloadRecordEncoder
    ) throws(DownloadError) {
        do {
            try encoder.appendValues(columns, of: record, to: &values)
        } catch {
            throw .internalError("cannot encode a record: \(error)")
        }
    }
}

extension PostgresBatchedWrite.Rule {
    /// Whether the statement names this worker (`$first`).
    var namesOwner: Bool { self == .unleasedOrOwner || self == .releasingCompleted }
}
