import GRDB

/// The one mapping of a failure of the embedded state database (SQLite, through GRDB) to the error the user is
/// told: what happened in SQLite's words, never the statement that met it, and what to do.
///
/// A damaged file is found when it is opened or only later, when a read reaches a page that is gone (a database
/// truncated while its write-ahead log still holds the schema): either way it is
/// ``DownloadError/damagedStateDatabase(path:reason:)``, which says to move it away. A full disk is
/// ``DownloadError/diskFull(path:)``, which a download waits out as it waits for room for its own file; a file that
/// cannot be written says whose it must be.
enum StateDatabaseFailure {
    /// The error for `failure`, met by the database at `path` while doing `action` ("cannot record events"; nil for
    /// the store's own work). A ``DownloadError`` thrown inside a transaction is returned as it is.
    static func error(_ failure: any Error, path: String, doing action: String? = nil) -> DownloadError {
        if let error = failure as? DownloadError { return error }
        guard let error = failure as? DatabaseError else {
            return .stateDatabase(path: path, reason: said("\(failure)"))
        }
        let code = error.extendedResultCode.rawValue
        let message = error.message ?? "SQLite error \(code)"
        switch error.resultCode.primaryResultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return .damagedStateDatabase(path: path, reason: said(message))
        case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH:
            return .stateDatabase(
                path: path, reason: said(message),
                suggestion: "make the state directory and its files writable by you, or give another --state-dir")
        case .SQLITE_FULL:
            // As a download's own full disk: a job waits for room (there, see `FreeSpacePolicy.stateDirectory`)
            // rather than failing, and a command that cannot record what it adds says to free space.
            return .diskFull(path: path)
        default:
            return .stateDatabase(path: path, reason: said("SQLite error \(code): \(message)"))
        }

        func said(_ reason: String) -> String { action.map { "\($0): \(reason)" } ?? reason }
    }
}
