import Foundation
import GRDB
import GRDBSQLite
import Testing

@testable import HaulKit

@Suite("Binding stored values to SQLite")
struct SQLiteStatementBinderTests {
    static func table() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT UNIQUE, b INTEGER, d TEXT)")
        }
        return queue
    }

    @Test("each kind of value is stored as GRDB stores it: an empty text stays text, a date is GRDB's text")
    func storesAsGRDBDoes() throws {
        let queue = try Self.table()
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        try queue.write { db in
            let insert = SQLiteStatementBinder(
                try db.cachedStatement(sql: "INSERT INTO t (n, s, b, d) VALUES (?, ?, ?, ?)"))
            try insert.execute([.integer(-7), .text(""), .boolean(true), .date(date)])
            try insert.execute([.null, .text("é/ü"), .boolean(false), .null])
        }
        let rows = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT n, s, b, d, typeof(s) AS k FROM t ORDER BY id")
        }
        #expect(rows.count == 2)
        #expect(rows[0]["n"] as Int64? == -7)
        #expect(rows[0]["s"] as String? == "")
        #expect(rows[0]["k"] as String? == "text")
        #expect(rows[0]["b"] as Bool? == true)
        #expect(rows[0]["d"] as Date? == date)
        #expect(rows[0]["d"] as String? == String.fromDatabaseValue(date.databaseValue))
        #expect(rows[1]["n"] as Int64? == nil)
        #expect(rows[1]["s"] as String? == "é/ü")
        #expect(rows[1]["b"] as Bool? == false)
        #expect(rows[1]["d"] as String? == nil)
    }

    @Test("a wrong count of values or a failed step throws, and the statement still runs afterwards")
    func failuresThrowAndLeaveTheStatementUsable() throws {
        let queue = try Self.table()
        try queue.write { db in
            let insert = SQLiteStatementBinder(try db.cachedStatement(sql: "INSERT INTO t (n, s) VALUES (?, ?)"))
            #expect(throws: DatabaseError.self) { try insert.execute([.integer(1)]) }
            try insert.execute([.integer(1), .text("a")])
            let error = #expect(throws: DatabaseError.self) { try insert.execute([.integer(2), .text("a")]) }
            #expect(error?.resultCode == .SQLITE_CONSTRAINT)
            #expect(error?.message?.contains("UNIQUE") == true)
            try insert.execute([.integer(3), .text("b")])
        }
        let count = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        #expect(count == 2)
    }

    @Test("texts bound where they lie arrive whole, short and long, and no binding outlives the call")
    func textsBoundInPlace() throws {
        let queue = try Self.table()
        let long = String(repeating: "ü/long-text-", count: 40)
        let date = Date(timeIntervalSince1970: 1_800_000_000.5)
        try queue.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO t (n, s, b, d) VALUES (?, ?, ?, ?)")
            let insert = SQLiteStatementBinder(statement)
            try insert.execute([.integer(1), .text("short"), .integer(2), .text(long)])
            try insert.execute([.integer(3), .text(long + "!"), .null, .date(date)])
            // Bound in place: once the call returns, nothing may still point at the caller's bytes.
            #expect(Self.expandedSQL(statement) == "INSERT INTO t (n, s, b, d) VALUES (NULL, NULL, NULL, NULL)")
            _ = #expect(throws: DatabaseError.self) { try insert.execute([.integer(4), .text("short"), .null, .null]) }
            #expect(Self.expandedSQL(statement) == "INSERT INTO t (n, s, b, d) VALUES (NULL, NULL, NULL, NULL)")
        }
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT n, s, b, d FROM t ORDER BY id") }
        #expect(rows.count == 2)
        #expect(rows[0]["s"] as String? == "short")
        #expect(rows[0]["d"] as String? == long)
        #expect(rows[1]["s"] as String? == long + "!")
        #expect(rows[1]["b"] as Int64? == nil)
        #expect(rows[1]["d"] as Date? == date)
    }

    @Test("one integer read back: a pragma's value, nil for no row or NULL, and the statement runs again")
    func readsOneInteger() throws {
        let queue = try Self.table()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO t (n) VALUES (41), (NULL)")
            let largest = SQLiteStatementBinder(try db.cachedStatement(sql: "SELECT max(n) + 1 FROM t"))
            #expect(try largest.integer() == 42)
            try db.execute(sql: "INSERT INTO t (n) VALUES (99)")
            #expect(try largest.integer() == 100)
            #expect(
                try SQLiteStatementBinder(try db.cachedStatement(sql: "SELECT n FROM t WHERE n < 0")).integer() == nil)
            #expect(try SQLiteStatementBinder(try db.cachedStatement(sql: "SELECT NULL")).integer() == nil)
            #expect(try SQLiteStatementBinder(try db.cachedStatement(sql: "PRAGMA user_version")).integer() == 0)
        }
    }

    /// The statement's SQL with its current bindings written in.
    static func expandedSQL(_ statement: Statement) -> String? {
        guard let text = sqlite3_expanded_sql(statement.sqliteStatement) else { return nil }
        defer { sqlite3_free(text) }
        return String(cString: text)
    }
}
