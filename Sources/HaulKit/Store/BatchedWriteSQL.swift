/// The statements both stores write many records with, one statement for a group of records (SQLite's, and the fleet's
/// PostgreSQL store): built here once from ``DownloadColumn``, each store giving its ``SQLDialect`` and, for
/// PostgreSQL, the lease rules it adds to an update.
package enum BatchedWriteSQL {
    /// `INSERT INTO table (a, b, …) VALUES (…), …`: `rows` rows of `columns`, parameters numbered from `first`.
    package static func insert(
        into table: String, _ columns: [DownloadColumn], rows: Int, dialect: SQLDialect, from first: Int = 1
    ) -> String {
        "INSERT INTO \(table) (\(columns.map(\.rawValue).joined(separator: ", "))) VALUES "
            + dialect.rows(columns, count: rows, from: first)
    }

    /// `UPDATE table AS d SET a = v.column2, … FROM (VALUES …) AS v WHERE d.id = v.column1`: `rows` rows, each the
    /// record's id then `columns`, parameters numbered from `first`. `assignments` and `conditions` are added; they
    /// name the table's row `d` and a row's values as ``value(of:among:)`` does.
    ///
    /// Both dialects name the columns of `VALUES` `column1`, `column2`, …, so the statement is the same in both.
    package static func update(
        _ table: String, _ columns: [DownloadColumn], rows: Int, dialect: SQLDialect, from first: Int = 1,
        assignments: [String] = [], conditions: [String] = []
    ) -> String {
        let set = columns.map { "\($0.rawValue) = \(value(of: $0, among: columns))" } + assignments
        return "UPDATE \(table) AS d SET \(set.joined(separator: ", ")) FROM (VALUES "
            + dialect.rows([.id] + columns, count: rows, from: first) + ") AS v WHERE "
            + (["d.id = v.column1"] + conditions).joined(separator: " AND ")
    }

    /// `v.columnN`: `column`'s value in a row of an ``update(_:_:rows:dialect:from:assignments:conditions:)`` of
    /// `columns` (the id comes first).
    package static func value(of column: DownloadColumn, among columns: [DownloadColumn]) -> String {
        guard let index = columns.firstIndex(of: column) else {
            preconditionFailure("\(column) is not among the written columns \(columns)")
        }
        return "v.column\(index + 2)"
    }

    /// `records` with only the last of each id, in order: a statement that met an id twice would write either (one by
    /// one, the last one won).
    package static func lastOfEachID(_ records: [DownloadRecord]) -> [DownloadRecord] {
        guard records.count > 1 else { return records }
        var seen = Set<Int64?>(minimumCapacity: records.count)
        guard !records.allSatisfy({ seen.insert($0.id).inserted }) else { return records }
        seen.removeAll(keepingCapacity: true)
        var kept: [DownloadRecord] = []
        kept.reserveCapacity(records.count)
        for record in records.reversed() where seen.insert(record.id).inserted { kept.append(record) }
        return kept.reversed()
    }
}
