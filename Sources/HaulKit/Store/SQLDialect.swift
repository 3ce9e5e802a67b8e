/// What differs in how the two stores' SQL is written (SQLite's in HaulKit, PostgreSQL's in the fleet's target): the
/// statements themselves are built once, from ``DownloadColumn``, by the helpers here and in `DownloadColumn`.
package enum SQLDialect: Sendable {
    /// `?` parameters; at most 999 a statement on older SQLite.
    case sqlite
    /// `$1, $2, …` parameters; 65,535 a statement (the protocol counts them in 16 bits).
    case postgres

    /// Ids listed in one statement at most (`WHERE id IN (…)`), well under the dialect's limit on parameters.
    package var idsPerStatement: Int {
        switch self {
        case .sqlite: 500
        case .postgres: 1_000
        }
    }

    /// `count` parameters separated by commas, numbered from `first` where the dialect numbers them: `?, ?` or
    /// `$3, $4`.
    package func parameters(_ count: Int, from first: Int = 1) -> String {
        switch self {
        case .sqlite: Array(repeating: "?", count: count).joined(separator: ", ")
        case .postgres: (first..<first + count).map { "$\($0)" }.joined(separator: ", ")
        }
    }

    /// `column`'s type: as declared in SQLite (``DownloadColumn/sqlType``), or PostgreSQL's for it.
    package func type(of column: DownloadColumn) -> String {
        switch (self, column.sqlType) {
        case (.sqlite, let type): type
        case (.postgres, "INTEGER"): "BIGINT"
        case (.postgres, "DATETIME"): "TIMESTAMPTZ"
        case (.postgres, "BOOLEAN"): "BOOLEAN"
        case (.postgres, _): "TEXT"
        }
    }

    /// `rows` rows of parameters for `columns`, numbered from `first`: `(?, ?), (?, ?)` or `($3::BIGINT, $4::TEXT)`.
    /// PostgreSQL's carry their column's type: a `NULL` has none of its own, and a row of `VALUES` takes its types
    /// from its values.
    package func rows(_ columns: [DownloadColumn], count rows: Int, from first: Int = 1) -> String {
        var text = ""
        text.reserveCapacity(rows * columns.count * (self == .sqlite ? 3 : 16))
        var number = first
        for row in 0..<rows {
            text += row == 0 ? "(" : ", ("
            for (index, column) in columns.enumerated() {
                if index > 0 { text += ", " }
                switch self {
                case .sqlite: text += "?"
                case .postgres: text += "$\(number)::\(type(of: column))"
                }
                number += 1
            }
            text += ")"
        }
        return text
    }

    /// `ids` in order, at most ``idsPerStatement`` a chunk, as the values a statement binds.
    package func idChunks(_ ids: [DownloadID]) -> [[Int64]] {
        chunks(ids).map { $0.map(\.rawValue) }
    }

    /// `values` in order, at most ``idsPerStatement`` a chunk: a list of any values that one statement binds.
    package func chunks<Value>(_ values: [Value]) -> [ArraySlice<Value>] {
        stride(from: 0, to: values.count, by: idsPerStatement).map {
            values[$0..<min(values.count, $0 + idsPerStatement)]
        }
    }
}

extension DownloadColumn {
    /// The condition of the records not completed (SQLite's partial index of them is made with it: migration v6).
    package static let unfinished = "state <> '\(DownloadState.completed.rawValue)'"
    /// The condition of the completed records.
    package static let completed = "state = '\(DownloadState.completed.rawValue)'"

    /// `SELECT <every column, in order> FROM table`; append a `WHERE` or `ORDER BY`. Both stores decode rows by
    /// these positions.
    package static func selectAll(from table: String) -> String {
        "SELECT \(allCases.map(\.rawValue).joined(separator: ", ")) FROM \(table)"
    }

    /// Why a table whose columns are `found` (each "name type", in order) is not one this version can use, or nil
    /// when they are the `expected` ones: the schema check both stores make when they open.
    package static func mismatch(table: String, found: [String], expected: [String]) -> String? {
        guard found != expected else { return nil }
        return "its \(table) table has the columns [\(found.joined(separator: ", "))], not the expected "
            + "[\(expected.joined(separator: ", "))]"
    }
}
