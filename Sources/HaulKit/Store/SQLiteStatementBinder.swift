import Foundation
import GRDB
import GRDBSQLite

/// Runs one of the store's cached `INSERT` and `UPDATE` statements with its values bound straight through SQLite's
/// C functions (and reads the one integer of a `PRAGMA`).
///
/// GRDB's `StatementArguments` maps every value through generic code that is not specialised across modules, then
/// binds it through more: 37% of the store's CPU when 10,000 small downloads were added and finished. Here a
/// ``StoredValue`` is bound as the column's storage class (dates as GRDB's text), as GRDB binds it.
///
/// Only for statements that write rows and return none (or a `PRAGMA`'s value), inside a database access that GRDB
/// runs: no transaction observer is registered on the store's database, so GRDB has nothing to learn from their
/// execution.
struct SQLiteStatementBinder {
    private let statement: Statement
    private let handle: SQLiteStatement

    init(_ statement: Statement) {
        self.statement = statement
        handle = statement.sqliteStatement
    }

    /// Binds `values` to the statement's parameters, in order, and runs it to the end.
    ///
    /// - Throws: `DatabaseError` when the count differs from the statement's parameters, or when SQLite fails.
    func execute(_ values: [StoredValue]) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE, message: "\(values.count) values for \(expected) parameters",
                sql: statement.sql)
        }
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        try bind(values, from: 0)
    }

    /// Runs a statement without parameters and returns the first column of its first row as an integer (nil when
    /// it has no row or the value is NULL); GRDB's `fetchOne` made a cursor and a value for it.
    ///
    /// - Throws: `DatabaseError` when SQLite fails.
    func integer() throws -> Int64? {
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        switch sqlite3_step(handle) {
        case SQLITE_ROW:
            return sqlite3_column_type(handle, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, 0)
        case SQLITE_DONE:
            return nil
        case let code:
            try check(code)
            return nil
        }
    }

    /// Binds `values[index...]` and runs the statement. A text is bound where it lies, without SQLite's copy (a
    /// `malloc` and a copy for each, about 16 per small download): each value is bound inside its own access to its
    /// bytes, the statement runs in the innermost, and it is reset and its bindings cleared before any access ends.
    private func bind(_ values: [StoredValue], from index: Int) throws {
        guard index < values.count else { return try run() }
        let position = CInt(index + 1)
        switch values[index] {
        case .null: try check(sqlite3_bind_null(handle, position))
        case .integer(let integer): try check(sqlite3_bind_int64(handle, position, integer))
        case .boolean(let boolean): try check(sqlite3_bind_int64(handle, position, boolean ? 1 : 0))
        case .text(var text):
            return try text.withUTF8 { bytes in
                try check(bind(bytes, at: position))
                try bind(values, from: index + 1)
            }
        case .date(let date):
            return try DownloadRecordEncoder.withText(date) { bytes in
                try check(bind(bytes, at: position))
                try bind(values, from: index + 1)
            }
        }
        try bind(values, from: index + 1)
    }

    /// Steps the bound statement to its end, then resets it and clears its bindings, whether it succeeded or not.
    private func run() throws {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE: return
            case SQLITE_ROW: continue
            case let code: try check(code)
            }
        }
    }

    /// Binds `bytes` as text that SQLite does not copy: valid only until the statement's bindings are cleared.
    private func bind(_ bytes: UnsafeBufferPointer<UInt8>, at index: CInt) -> CInt {
        // An empty buffer may have no address, which SQLite would bind as NULL.
        guard let address = bytes.baseAddress, !bytes.isEmpty else {
            return sqlite3_bind_text(handle, index, "", 0, Self.transient)
        }
        return address.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            // No destructor (`SQLITE_STATIC`): SQLite reads the caller's bytes, valid while they are bound.
            sqlite3_bind_text(handle, index, $0, CInt(bytes.count), nil)
        }
    }

    private func check(_ code: CInt) throws {
        guard code != SQLITE_OK else { return }
        let message = sqlite3_errmsg(sqlite3_db_handle(handle)).map { String(cString: $0) }
        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the text before the call returns.
    private static let transient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)
}
