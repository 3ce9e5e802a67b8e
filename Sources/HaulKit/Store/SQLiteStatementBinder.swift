import Foundation
import GRDB
import GRDBSQLite

/// Runs one of the store's cached `INSERT` and `UPDATE` statements with its values bound straight through SQLite's
/// C functions.
///
/// GRDB's `StatementArguments` maps every value through generic code that is not specialised across modules, then
/// binds it through more: 37% of the store's CPU when 10,000 small downloads were added and finished. Here a
/// ``StoredValue`` is bound as the column's storage class (dates as GRDB's text), as GRDB binds it.
///
/// Only for statements that write rows and return none, inside a transaction that GRDB runs: no transaction
/// observer is registered on the store's database, so GRDB has nothing to learn from their execution.
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
        defer {
            // Frees the copied texts and ends the statement whether it succeeded or not.
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        for (offset, value) in values.enumerated() {
            try check(bind(value, at: CInt(offset + 1)))
        }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE: return
            case SQLITE_ROW: continue
            case let code: try check(code)
            }
        }
    }

    private func bind(_ value: StoredValue, at index: CInt) -> CInt {
        switch value {
        case .null: sqlite3_bind_null(handle, index)
        case .integer(let integer): sqlite3_bind_int64(handle, index, integer)
        case .boolean(let boolean): sqlite3_bind_int64(handle, index, boolean ? 1 : 0)
        case .text(let text): bind(text, at: index)
        case .date(let date): DownloadRecordEncoder.withText(date) { bind($0, at: index) }
        }
    }

    private func bind(_ text: String, at index: CInt) -> CInt {
        var text = text
        return text.withUTF8 { bind($0, at: index) }
    }

    private func bind(_ bytes: UnsafeBufferPointer<UInt8>, at index: CInt) -> CInt {
        // An empty buffer may have no address, which SQLite would bind as NULL.
        guard let address = bytes.baseAddress, !bytes.isEmpty else {
            return sqlite3_bind_text(handle, index, "", 0, Self.transient)
        }
        return address.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            sqlite3_bind_text(handle, index, $0, CInt(bytes.count), Self.transient)
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
