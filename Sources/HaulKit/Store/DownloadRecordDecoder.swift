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

    /// Decodes a row of ``select`` (columns in the order of ``DownloadColumn``); throws on any value of the wrong
    /// type, never traps.
    mutating func decode(_ row: Row) throws -> DownloadRecord {
        let optionsText: String = try row.decode(atIndex: 4)
        let stateText: String = try row.decode(atIndex: 5)
        guard let state = DownloadState(rawValue: stateText) else {
            throw DownloadError.internalError("unknown download state '\(stateText)'")
        }
        var record = DownloadRecord(
            id: try row.decode(atIndex: 0), url: try row.decode(atIndex: 1),
            requestedDestination: try destination(try row.decode(atIndex: 2)),
            destinationPath: try row.decode(atIndex: 3), options: try options(optionsText), state: state,
            createdAt: try row.decode(atIndex: 6), updatedAt: try row.decode(atIndex: 7))
        record.startedAt = try row.decode(atIndex: 8)
        record.completedAt = try row.decode(atIndex: 9)
        record.errorCode = try row.decode(atIndex: 10)
        record.errorSummary = try row.decode(atIndex: 11)
        record.errorSuggestion = try row.decode(atIndex: 12)
        record.errorTransient = try row.decode(atIndex: 13)
        record.errorHTTPStatus = try row.decode(atIndex: 14)
        record.hasPartData = try row.decode(atIndex: 15)
        record.generation = try row.decode(atIndex: 16)
        record.durableBytes = try row.decode(atIndex: 17)
        record.bootID = try row.decode(atIndex: 18)
        record.etag = try row.decode(atIndex: 19)
        record.lastModified = try row.decode(atIndex: 20)
        record.totalBytes = try row.decode(atIndex: 21)
        record.contentEncoding = try row.decode(atIndex: 22)
        record.finalURL = try row.decode(atIndex: 23)
        record.finalizing = try row.decode(atIndex: 24)
        if let plan: String = try row.decode(atIndex: 25) {
            record.segments = try json.decode([Segment].self, from: Data(plan.utf8))
        }
        return record
    }

    /// ``decode(_:)``, or the damaged stand-in when the row cannot be read, so one bad row never stops the rest.
    mutating func decodeOrMarkDamaged(_ row: Row) -> DownloadRecord {
        do {
            return try decode(row)
        } catch {
            let id: Int64 = (try? row.decode(atIndex: 0)) ?? 0
            let url: String? = try? row.decode(atIndex: 1)
            return .damaged(id: id, url: url, reason: Self.describe(error))
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? DownloadError { return error.summary }
        return String(describing: error).split(separator: "\n").first.map(String.init) ?? "unreadable"
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
        while let row = try rows.next() { records.append(decoder.decodeOrMarkDamaged(row)) }
        return records
    }
}
