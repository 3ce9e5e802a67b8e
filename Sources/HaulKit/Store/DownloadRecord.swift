import Foundation

/// One download as stored in the state database: what was asked for, where it stands, and what was verified.
///
/// Two writers share a row and never write the same columns (``DownloadColumn/owner``): the manager owns the
/// life-cycle and settings columns, the running job the ``transfer`` columns. The destination path is chosen by the
/// manager (at `add`, or when the job asks for a name) and recorded by the job with its columns, so the record
/// names a part file before the file exists.
struct DownloadRecord: Sendable, Equatable {
    var id: Int64?
    var url: String
    /// The destination given to `add` (nil: the manager's download directory).
    var requestedDestination: DownloadDestination?
    /// The resolved destination file; set at `add` for an explicit file, at the first response otherwise.
    var destinationPath: String?
    var options: DownloadOptions
    var state: DownloadState
    var createdAt: Date
    var updatedAt: Date
    var startedAt: Date?
    var completedAt: Date?
    var errorCode: Int?
    var errorSummary: String?
    var errorSuggestion: String?
    var errorTransient: Bool?
    var errorHTTPStatus: Int?

    /// What the running job found and wrote; the job hands it back whole when it ends.
    var transfer = TransferRecord()

    var downloadID: DownloadID { DownloadID(rawValue: id ?? 0) }

    var partPath: String? { destinationPath.map { $0 + partFileSuffix } }

    /// The multi-connection journal beside the part file.
    var journalPath: String? { partPath.map { $0 + SegmentJournal.suffix } }

    /// Bytes on disk as of the last checkpoint.
    var checkpointedBytes: Int64 { transfer.checkpointedBytes }

    /// A row that could not be read: shown as failed with a ``DownloadError/Code/damagedRecord`` error, never run
    /// or written, and deleted by `remove`.
    var isDamaged: Bool { errorCode == DownloadError.Code.damagedRecord.rawValue }

    /// The stand-in for a row that could not be read.
    static func damaged(id: Int64, url: String?, reason: String) -> DownloadRecord {
        let now = Date()
        var record = DownloadRecord(
            id: id, url: url ?? "", requestedDestination: nil, destinationPath: nil, options: DownloadOptions(),
            state: .failed, createdAt: now, updatedAt: now)
        record.lastError = .damagedRecord(DownloadID(rawValue: id), reason: reason)
        return record
    }

    var lastError: DownloadError? {
        get {
            guard let errorCode else { return nil }
            return DownloadError(
                code: .init(rawValue: errorCode), summary: errorSummary ?? "", suggestion: errorSuggestion ?? "",
                isTransient: errorTransient ?? false, httpStatus: errorHTTPStatus)
        }
        set {
            errorCode = newValue?.code.rawValue
            errorSummary = newValue?.summary
            errorSuggestion = newValue?.suggestion
            errorTransient = newValue?.isTransient
            errorHTTPStatus = newValue?.httpStatus
        }
    }
}
