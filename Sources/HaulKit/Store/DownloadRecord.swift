import Foundation
import GRDB

/// One download as stored in the state database: what was asked for, where it stands, and what was verified.
///
/// Two writers share a row and never write the same columns: the manager owns the life-cycle and settings columns
/// (`DownloadColumn.lifecycle`, `.settings`); the running job owns the transfer columns (`DownloadColumn.job`).
struct DownloadRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "download"

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

    // Transfer columns, written by the job.
    /// True once validators were recorded and the part file holds this record's bytes; a part file without this
    /// is never trusted.
    var hasPartData: Bool = false
    /// Bumped each time the part file is cut back; a checkpoint of an older generation is discarded.
    var generation: Int64 = 0
    /// Bytes that were `fdatasync`ed before this value was committed: true even after an OS crash.
    var durableBytes: Int64 = 0
    /// The boot in which the part file was last written; while it is unchanged, every byte in the file is trusted.
    var bootID: String?
    var etag: String?
    var lastModified: String?
    var totalBytes: Int64?
    var contentEncoding: String?
    var finalURL: String?
    /// Set after the complete part file was synced and verified, just before it is renamed into place.
    var finalizing: Bool = false
    /// The plan of a multi-connection download as of the last checkpoint (bytes synced per segment); nil for one
    /// connection.
    var segments: [Segment]?

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    var downloadID: DownloadID { DownloadID(rawValue: id ?? 0) }

    var partPath: String? { destinationPath.map { $0 + partFileSuffix } }

    /// The multi-connection journal beside the part file.
    var journalPath: String? { partPath.map { $0 + SegmentJournal.suffix } }

    /// Bytes on disk as of the last checkpoint.
    var checkpointedBytes: Int64 { segments.map { $0.reduce(0) { $0 + $1.written } } ?? durableBytes }

    var validator: ResourceValidator? {
        guard hasPartData else { return nil }
        return ResourceValidator(
            etag: etag, lastModified: lastModified, totalBytes: totalBytes, contentEncoding: contentEncoding)
    }

    mutating func record(_ validator: ResourceValidator) {
        etag = validator.etag
        lastModified = validator.lastModified
        totalBytes = validator.totalBytes
        contentEncoding = validator.contentEncoding
    }

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
