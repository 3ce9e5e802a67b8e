import Foundation

/// One download as stored in the state database: what was asked for, where it stands, and what was verified.
///
/// Two writers share a row and never write the same columns (``DownloadColumn/owner``): the manager owns the
/// life-cycle and settings columns, the running job the ``transfer`` columns. The destination path is chosen by the
/// manager (at `add`, or when the job asks for a name) and recorded by the job with its columns, so the record
/// names a part file before the file exists.
package struct DownloadRecord: Sendable, Equatable {
    // Laid out so that the optionals' tag bytes pack together: the manager keeps 100,000 of these.
    package var id: Int64?
    var url: String
    /// The resolved destination file; set at `add` for an explicit file, at the first response otherwise.
    var destinationPath: String?
    var createdAt: Date
    package var updatedAt: Date
    var startedAt: Date?
    package var state: DownloadState
    var completedAt: Date?
    /// The destination given to `add` (nil: the manager's download directory).
    var requestedDestination: DownloadDestination?
    /// The foreground command that owns the download (``DownloadManager/Configuration/ownsItsDownloads``), as
    /// ``ForegroundOwner/text``; nil for the queue's downloads, which any manager that runs downloads may run.
    var owner: String?

    var options: DownloadOptions {
        get { storedOptions.value }
        _modify { yield &storedOptions.value }
    }

    /// What the running job found and wrote; the job hands it back whole when it ends.
    var transfer: TransferRecord {
        get { storedTransfer.value }
        _modify { yield &storedTransfer.value }
    }

    /// Out of line: most records share their options with the others added in their batch, and a download that never
    /// ran has the empty transfer every such record shares.
    var storedOptions: OutOfLine<DownloadOptions>
    private(set) var storedTransfer = OutOfLine(sharing: Self.noTransfer)
    private static let noTransfer = OutOfLine<TransferRecord>.Box(TransferRecord())
    /// The error columns, out of line and nil while all are (most records never failed).
    private(set) var storedError: OutOfLine<ErrorColumns>?
    /// The completed file's fingerprint, out of line (nil until the download completes).
    private(set) var storedFingerprint: OutOfLine<FileFingerprint>?

    /// What the file was when the download completed; nil before (or for one completed by an earlier version).
    var fingerprint: FileFingerprint? {
        get { storedFingerprint?.value }
        set { storedFingerprint = newValue.map { OutOfLine($0) } }
    }

    /// The last error as stored, column by column.
    struct ErrorColumns: Sendable, Equatable {
        var code: Int?
        var summary: String?
        var suggestion: String?
        var transient: Bool?
        var httpStatus: Int?
    }

    /// The error columns; nil while all are nil (no box is kept for them).
    var errorColumns: ErrorColumns? {
        get { storedError?.value }
        set { storedError = newValue.flatMap { $0 == ErrorColumns() ? nil : OutOfLine($0) } }
    }

    init(
        id: Int64? = nil, url: String, requestedDestination: DownloadDestination? = nil,
        destinationPath: String? = nil, options: DownloadOptions, state: DownloadState, createdAt: Date,
        updatedAt: Date
    ) {
        self.init(
            id: id, url: url, requestedDestination: requestedDestination, destinationPath: destinationPath,
            sharing: OutOfLine(options), state: state, createdAt: createdAt, updatedAt: updatedAt)
    }

    /// A record whose options are `options`, shared with the other records that hold it.
    init(
        id: Int64? = nil, url: String, requestedDestination: DownloadDestination? = nil,
        destinationPath: String? = nil, sharing options: OutOfLine<DownloadOptions>, state: DownloadState,
        createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.url = url
        self.requestedDestination = requestedDestination
        self.destinationPath = destinationPath
        storedOptions = options
        self.state = state
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    package var downloadID: DownloadID { DownloadID(rawValue: id ?? 0) }

    var partPath: String? { destinationPath.map { $0 + partFileSuffix } }

    /// The multi-connection journal beside the part file.
    var journalPath: String? { partPath.map { $0 + SegmentJournal.suffix } }

    /// Bytes on disk as of the last checkpoint.
    var checkpointedBytes: Int64 { transfer.checkpointedBytes }

    /// A row that could not be read: shown as failed with a ``DownloadError/Code/damagedRecord`` error, never run
    /// or written, and deleted by `remove`.
    var isDamaged: Bool { errorColumns?.code == DownloadError.Code.damagedRecord.rawValue }

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
            guard let columns = errorColumns, let code = columns.code else { return nil }
            return DownloadError(
                code: .init(rawValue: code), summary: columns.summary ?? "", suggestion: columns.suggestion ?? "",
                isTransient: columns.transient ?? false, httpStatus: columns.httpStatus)
        }
        set {
            errorColumns = newValue.map {
                ErrorColumns(
                    code: $0.code.rawValue, summary: $0.summary, suggestion: $0.suggestion, transient: $0.isTransient,
                    httpStatus: $0.httpStatus)
            }
        }
    }
}
