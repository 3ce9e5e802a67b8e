import Foundation
import GRDB
import GRDBSQLite

/// The current row of a stepping SQLite statement, read straight through SQLite's C functions: what start-up and
/// `haul list` use to read every record (GRDB's `Row` made a value, and for dates a `Data`, per column).
///
/// Values of the expected storage class are read directly; any other goes through GRDB's conversion, so a value of
/// the wrong type still throws as it does through ``Row``.
struct SQLiteStatementRow: StoredRow {
    let statement: SQLiteStatement

    init(_ statement: Statement) { self.statement = statement.sqliteStatement }

    func integer(at index: Int) throws -> Int64? {
        switch sqlite3_column_type(statement, CInt(index)) {
        case SQLITE_NULL: nil
        case SQLITE_INTEGER: sqlite3_column_int64(statement, CInt(index))
        default: try converted(index)
        }
    }

    func text(at index: Int) throws -> String? {
        switch sqlite3_column_type(statement, CInt(index)) {
        case SQLITE_NULL: nil
        case SQLITE_TEXT:
            String(
                decoding: UnsafeRawBufferPointer(
                    start: sqlite3_column_text(statement, CInt(index)),
                    count: Int(sqlite3_column_bytes(statement, CInt(index)))), as: UTF8.self)
        default: try converted(index)
        }
    }

    func boolean(at index: Int) throws -> Bool? {
        switch sqlite3_column_type(statement, CInt(index)) {
        case SQLITE_NULL: nil
        case SQLITE_INTEGER: sqlite3_column_int64(statement, CInt(index)) != 0
        default: try converted(index)
        }
    }

    func date(at index: Int) throws -> Date? {
        switch sqlite3_column_type(statement, CInt(index)) {
        case SQLITE_NULL:
            return nil
        case SQLITE_TEXT:
            let bytes = UnsafeRawBufferPointer(
                start: sqlite3_column_text(statement, CInt(index)),
                count: Int(sqlite3_column_bytes(statement, CInt(index))))
            return try DownloadRecordDecoder.storedDate(bytes) ?? converted(index)
        default:
            return try converted(index)
        }
    }

    /// The value through GRDB's conversion (which throws for a value of the wrong type, as ``Row`` does).
    private func converted<T: DatabaseValueConvertible>(_ index: Int) throws -> T {
        let value = DatabaseValue(sqliteStatement: statement, index: CInt(index))
        guard let converted = T.fromDatabaseValue(value) else {
            throw DownloadError.internalError("column \(index) holds \(value), not a \(T.self)")
        }
        return converted
    }
}
