import Foundation
import GRDB

/// Reads ``DownloadRecord``s from rows quickly enough for a queue of 100,000: columns by position, and each JSON
/// column (options, destination) decoded once per distinct text, since a batch added together shares them.
///
/// The result equals what `Codable` decoding of the same row gives (a test compares them).
struct DownloadRecordDecoder {
    /// `SELECT <columns> FROM download`; append a `WHERE` or `ORDER BY`.
    static let select =
        "SELECT \(DownloadColumn.allCases.map(\.rawValue).joined(separator: ", ")) FROM \(DownloadRecord.databaseTableName)"

    private var options: [String: DownloadOptions] = [:]
    private var destinations: [String: DownloadDestination] = [:]
    private let json = DownloadRecord.databaseJSONDecoder(for: "options")

    /// Decodes a row of ``select`` (columns in the order of ``DownloadColumn``).
    mutating func decode(_ row: Row) throws -> DownloadRecord {
        let optionsText: String = row[4]
        let stateText: String = row[5]
        guard let state = DownloadState(rawValue: stateText) else {
            throw DownloadError.internalError("unknown download state '\(stateText)' in the database")
        }
        var record = DownloadRecord(
            id: row[0], url: row[1], requestedDestination: try destination(row[2]), destinationPath: row[3],
            options: try options(optionsText), state: state, createdAt: row[6], updatedAt: row[7])
        record.startedAt = row[8]
        record.completedAt = row[9]
        record.errorCode = row[10]
        record.errorSummary = row[11]
        record.errorSuggestion = row[12]
        record.errorTransient = row[13]
        record.errorHTTPStatus = row[14]
        record.hasPartData = row[15]
        record.generation = row[16]
        record.durableBytes = row[17]
        record.bootID = row[18]
        record.etag = row[19]
        record.lastModified = row[20]
        record.totalBytes = row[21]
        record.contentEncoding = row[22]
        record.finalURL = row[23]
        record.finalizing = row[24]
        if let plan: String = row[25] {
            record.segments = try json.decode([Segment].self, from: Data(plan.utf8))
        }
        return record
    }

    private mutating func options(_ text: String) throws -> DownloadOptions {
        if let known = options[text] { return known }
        let decoded = try json.decode(DownloadOptions.self, from: Data(text.utf8))
        options[text] = decoded
        return decoded
    }

    private mutating func destination(_ text: String?) throws -> DownloadDestination? {
        guard let text else { return nil }
        if let known = destinations[text] { return known }
        let decoded = try json.decode(DownloadDestination.self, from: Data(text.utf8))
        destinations[text] = decoded
        return decoded
    }

    /// The records `sql` (a ``select`` with its clauses) finds.
    static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [DownloadRecord] {
        var decoder = DownloadRecordDecoder()
        var records: [DownloadRecord] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() { records.append(try decoder.decode(row)) }
        return records
    }
}
