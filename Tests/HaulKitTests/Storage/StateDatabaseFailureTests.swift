import GRDB
import Testing

@testable import HaulKit

/// ``StateDatabaseFailure``: what the user is told when the state database fails, never the SQL that met it.
@Suite("State database failures as the user is told them")
struct StateDatabaseFailureTests {
    static let path = "/home/u/.local/share/haul/haul.sqlite"
    static let sql = "SELECT id, url FROM download WHERE state <> 'completed'"

    @Test("damaged, found at open or by a later read: it says so and to move it away, without the statement")
    func damaged() {
        for code in [ResultCode.SQLITE_CORRUPT, .SQLITE_NOTADB, ResultCode(rawValue: 779)] {  // 779: CORRUPT_INDEX
            let error = StateDatabaseFailure.error(
                DatabaseError(resultCode: code, message: "database disk image is malformed", sql: Self.sql),
                path: Self.path)
            #expect(error.code == .stateDatabase)
            #expect(error.summary.contains("it is damaged (database disk image is malformed)"), "\(error.summary)")
            #expect(error.suggestion.contains("move it away"))
            #expect(error.suggestion.contains("-wal"), "its log goes with it")
            #expect(error.suggestion.contains("--no-clobber"), "the files already there are kept")
            #expect(!error.description.contains("SELECT"), "\(error.description)")
        }
    }

    @Test("a full disk is a full disk, which a download waits out; a file it may not write says to make it writable")
    func fullOrReadOnly() {
        let full = StateDatabaseFailure.error(
            DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full", sql: Self.sql), path: Self.path
        )
        #expect(full == .diskFull(path: Self.path))
        // An extended code (SQLITE_READONLY_DBMOVED) maps as its primary one.
        let readOnly = StateDatabaseFailure.error(
            DatabaseError(resultCode: ResultCode(rawValue: 1032), message: "attempt to write a readonly database"),
            path: Self.path)
        #expect(readOnly.suggestion.contains("writable"), "\(readOnly)")
        #expect(!readOnly.description.contains("SELECT"))
    }

    @Test("any other failure: SQLite's code and words, the action it stopped, and no statement")
    func other() {
        let error = StateDatabaseFailure.error(
            DatabaseError(resultCode: ResultCode(rawValue: 778), message: "disk I/O error", sql: Self.sql),
            path: Self.path, doing: "cannot record events")
        #expect(error.summary == "state database \(Self.path): cannot record events: SQLite error 778: disk I/O error")
        #expect(!error.description.contains("SELECT"))
        // A Haul error thrown inside a transaction is kept as it is.
        let own = DownloadError.stateDatabase(path: Self.path, reason: "no download id is left")
        #expect(StateDatabaseFailure.error(own, path: "/elsewhere") == own)
    }
}
