/// The one definition of the `download` table: its columns in order, each with its SQL type and the writer that
/// owns it. The SQLite schema is checked against it at open, and the record encoder and decoder switch over it
/// exhaustively, so a new column that is not stored and read back fails to compile.
///
/// Adding a column: a case here (at the end), a field in ``DownloadRecord`` or ``TransferRecord``, a migration in
/// ``DownloadSchema``, and the two `switch`es the compiler then points at.
package enum DownloadColumn: String, CaseIterable, Sendable {
    case id, url, requestedDestination, destinationPath, options, state, createdAt, updatedAt, startedAt
    case completedAt, errorCode, errorSummary, errorSuggestion, errorTransient, errorHTTPStatus, hasPartData
    case generation, durableBytes, bootID, etag, lastModified, totalBytes, contentEncoding, finalURL, finalizing
    case segments
    /// The foreground command that owns the download (``DownloadRecord/owner``).
    case owner
    /// The completed file's fingerprint (``FileFingerprint``).
    case fileSize, fileModified, fileIdentity, sha256
    /// What the completed file was verified against (``DownloadVerification``, JSON).
    case verification

    /// Who writes a column after the record is inserted.
    enum Owner: Sendable {
        /// Written once, when the download is added.
        case identity
        /// The manager, at each change of state.
        case lifecycle
        /// The manager, when the options or the URL change.
        case settings
        /// The running job: what is on disk and what was verified.
        case job
        /// Every write (the change time other processes watch).
        case everyWrite
    }

    var owner: Owner {
        switch self {
        case .id, .requestedDestination, .createdAt: .identity
        // The URL too: a freshly signed URL for the same file replaces the old one (``ResourceKey``).
        case .url, .options: .settings
        case .state, .startedAt, .completedAt, .errorCode, .errorSummary, .errorSuggestion, .errorTransient,
            .errorHTTPStatus, .owner, .fileSize, .fileModified, .fileIdentity, .sha256, .verification:
            .lifecycle
        case .destinationPath, .hasPartData, .generation, .durableBytes, .bootID, .etag, .lastModified, .totalBytes,
            .contentEncoding, .finalURL, .finalizing, .segments:
            .job
        case .updatedAt: .everyWrite
        }
    }

    /// The column's declared type in SQLite, as `PRAGMA table_info` reports it.
    package var sqlType: String {
        switch self {
        case .id, .errorCode, .errorHTTPStatus, .generation, .durableBytes, .totalBytes, .fileSize, .fileModified:
            "INTEGER"
        // JSON columns (destination, options, segments) are declared TEXT too.
        case .url, .requestedDestination, .destinationPath, .options, .state, .errorSummary, .errorSuggestion,
            .bootID, .etag, .lastModified, .contentEncoding, .finalURL, .segments, .owner, .fileIdentity, .sha256,
            .verification:
            "TEXT"
        case .createdAt, .updatedAt, .startedAt, .completedAt: "DATETIME"
        case .errorTransient, .hasPartData, .finalizing: "BOOLEAN"
        }
    }

    /// The columns `owner` writes, with the change time.
    static func written(by owner: Owner) -> [DownloadColumn] {
        allCases.filter { $0.owner == owner || $0.owner == .everyWrite }
    }

    /// Written by the manager at each change of state.
    package static let lifecycle = written(by: .lifecycle)

    /// Written by the manager when the options change (a new speed limit).
    package static let settings = written(by: .settings)

    /// Written by the running job (what is on disk and what was verified).
    package static let job = written(by: .job)

    /// The statements that write `columns` of many records (SQLite).
    struct Update: Sendable {
        let columns: [DownloadColumn]
        /// `UPDATE download SET a = ?, b = ? WHERE id = ?`: one record, the columns then the id.
        let single: String
        /// For each size, largest first: one statement that writes that many records, each the id then the columns
        /// (``BatchedWriteSQL/update(_:_:rows:dialect:from:assignments:conditions:)``).
        let batches: [(rows: Int, sql: String)]

        /// The sizes of the batched statements: few, so few are prepared and cached.
        static let batchSizes = [64, 16, 4]

        init(_ columns: [DownloadColumn]) {
            self.columns = columns
            single = "UPDATE download SET \(columns.map { "\($0.rawValue) = ?" }.joined(separator: ", ")) WHERE id = ?"
            batches = Self.batchSizes.map { rows in
                (rows, BatchedWriteSQL.update("download", columns, rows: rows, dialect: .sqlite))
            }
        }
    }

    /// The statements that insert records (SQLite).
    struct Insert: Sendable {
        /// Every column but the id, in order.
        let columns: [DownloadColumn]
        /// `INSERT INTO download (url, …) VALUES (?, …)`: one record, SQLite picks its id.
        let single: String
        /// For each size, largest first (the last is 1): that many records, each its id then the columns
        /// (``BatchedWriteSQL/insert(into:_:rows:dialect:from:)``).
        let batches: [(rows: Int, sql: String)]

        init() {
            columns = DownloadColumn.allCases.filter { $0 != .id }
            single = BatchedWriteSQL.insert(into: "download", columns, rows: 1, dialect: .sqlite)
            batches = (Update.batchSizes + [1]).map { [columns] rows in
                (rows, BatchedWriteSQL.insert(into: "download", [.id] + columns, rows: rows, dialect: .sqlite))
            }
        }
    }

    static let insertion = Insert()

    static let updateLifecycle = Update(lifecycle)
    static let updateSettings = Update(settings)
    static let updateJob = Update(job)

    /// `SELECT <every column, in order> FROM download` (``selectAll(from:)``); append a `WHERE` or `ORDER BY`.
    static let select = selectAll(from: "download")
}
