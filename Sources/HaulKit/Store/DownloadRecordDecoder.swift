import Foundation
import GRDB

/// Reads ``DownloadRecord``s from rows of ``DownloadColumn/select`` quickly enough for a queue of 100,000: columns
/// by position (the order of ``DownloadColumn/allCases``), and each JSON column (options, destination) decoded once
/// per distinct text, since a batch added together shares them.
///
/// What ``DownloadRecordEncoder`` writes reads back equal (a test checks every column).
struct DownloadRecordDecoder {
    private var options: [String: DownloadOptions] = [:]
    private var destinations: [String: DownloadDestination] = [:]
    private let json = StoredJSON.decoder()

    /// Decodes a row of ``DownloadColumn/select``; throws on any value of the wrong type, never traps.
    mutating func decode(_ row: Row) throws -> DownloadRecord {
        var record = DownloadRecord(
            url: "", options: DownloadOptions(), state: .failed, createdAt: .distantPast, updatedAt: .distantPast)
        for (index, column) in DownloadColumn.allCases.enumerated() {
            switch column {
            case .id: record.id = try row.decode(atIndex: index)
            case .url: record.url = try row.decode(atIndex: index)
            case .requestedDestination: record.requestedDestination = try destination(try row.decode(atIndex: index))
            case .destinationPath: record.destinationPath = try row.decode(atIndex: index)
            case .options: record.options = try options(try row.decode(atIndex: index))
            case .state:
                let text: String = try row.decode(atIndex: index)
                guard let state = DownloadState(rawValue: text) else {
                    throw DownloadError.internalError("unknown download state '\(text)'")
                }
                record.state = state
            case .createdAt: record.createdAt = try row.decode(atIndex: index)
            case .updatedAt: record.updatedAt = try row.decode(atIndex: index)
            case .startedAt: record.startedAt = try row.decode(atIndex: index)
            case .completedAt: record.completedAt = try row.decode(atIndex: index)
            case .errorCode: record.errorCode = try row.decode(atIndex: index)
            case .errorSummary: record.errorSummary = try row.decode(atIndex: index)
            case .errorSuggestion: record.errorSuggestion = try row.decode(atIndex: index)
            case .errorTransient: record.errorTransient = try row.decode(atIndex: index)
            case .errorHTTPStatus: record.errorHTTPStatus = try row.decode(atIndex: index)
            case .hasPartData: record.transfer.hasPartData = try row.decode(atIndex: index)
            case .generation: record.transfer.generation = try row.decode(atIndex: index)
            case .durableBytes: record.transfer.durableBytes = try row.decode(atIndex: index)
            case .bootID: record.transfer.bootID = try row.decode(atIndex: index)
            case .etag: record.transfer.etag = try row.decode(atIndex: index)
            case .lastModified: record.transfer.lastModified = try row.decode(atIndex: index)
            case .totalBytes: record.transfer.totalBytes = try row.decode(atIndex: index)
            case .contentEncoding: record.transfer.contentEncoding = try row.decode(atIndex: index)
            case .finalURL: record.transfer.finalURL = try row.decode(atIndex: index)
            case .finalizing: record.transfer.finalizing = try row.decode(atIndex: index)
            case .segments:
                if let plan: String = try row.decode(atIndex: index) {
                    record.transfer.segments = try json.decode([Segment].self, from: Data(plan.utf8))
                }
            }
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

    /// The records `sql` (a ``DownloadColumn/select`` with its clauses) finds.
    static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [DownloadRecord] {
        var decoder = DownloadRecordDecoder()
        var records: [DownloadRecord] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() { records.append(decoder.decodeOrMarkDamaged(row)) }
        return records
    }
}
