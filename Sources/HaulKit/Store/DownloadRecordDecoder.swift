import Foundation
import GRDB

/// One stored row, read by column position (the order of ``DownloadColumn/allCases``); each backend's row type
/// conforms. A value of the wrong type throws, never traps.
protocol StoredRow {
    func integer(at index: Int) throws -> Int64?
    func text(at index: Int) throws -> String?
    func boolean(at index: Int) throws -> Bool?
    func date(at index: Int) throws -> Date?
}

extension Row: StoredRow {
    func integer(at index: Int) throws -> Int64? { try decode(atIndex: index) }
    func text(at index: Int) throws -> String? { try decode(atIndex: index) }
    func boolean(at index: Int) throws -> Bool? { try decode(atIndex: index) }
    func date(at index: Int) throws -> Date? { try decode(atIndex: index) }
}

/// Reads ``DownloadRecord``s from rows of ``DownloadColumn/select`` quickly enough for a queue of 100,000: columns
/// by position (the order of ``DownloadColumn/allCases``), and each JSON column (options, destination) decoded once
/// per distinct text, since a batch added together shares them. Any backend's rows (``StoredRow``).
///
/// What ``DownloadRecordEncoder`` writes reads back equal (a test checks every column).
struct DownloadRecordDecoder {
    private var options: [String: DownloadOptions] = [:]
    private var destinations: [String: DownloadDestination] = [:]
    private let json = StoredJSON.decoder()

    /// Decodes a row of ``DownloadColumn/select``; throws on any value of the wrong type, never traps.
    mutating func decode(_ row: some StoredRow) throws -> DownloadRecord {
        var record = DownloadRecord(
            url: "", options: DownloadOptions(), state: .failed, createdAt: .distantPast, updatedAt: .distantPast)
        func required<T>(_ value: T?, _ column: DownloadColumn) throws -> T {
            guard let value else { throw DownloadError.internalError("\(column.rawValue) is missing") }
            return value
        }
        for (index, column) in DownloadColumn.allCases.enumerated() {
            switch column {
            case .id: record.id = try row.integer(at: index)
            case .url: record.url = try required(row.text(at: index), column)
            case .requestedDestination: record.requestedDestination = try destination(try row.text(at: index))
            case .destinationPath: record.destinationPath = try row.text(at: index)
            case .options: record.options = try options(try required(row.text(at: index), column))
            case .state:
                let text = try required(row.text(at: index), column)
                guard let state = DownloadState(rawValue: text) else {
                    throw DownloadError.internalError("unknown download state '\(text)'")
                }
                record.state = state
            case .createdAt: record.createdAt = try required(row.date(at: index), column)
            case .updatedAt: record.updatedAt = try required(row.date(at: index), column)
            case .startedAt: record.startedAt = try row.date(at: index)
            case .completedAt: record.completedAt = try row.date(at: index)
            case .errorCode: record.errorCode = try row.integer(at: index).map(Int.init)
            case .errorSummary: record.errorSummary = try row.text(at: index)
            case .errorSuggestion: record.errorSuggestion = try row.text(at: index)
            case .errorTransient: record.errorTransient = try row.boolean(at: index)
            case .errorHTTPStatus: record.errorHTTPStatus = try row.integer(at: index).map(Int.init)
            case .hasPartData: record.transfer.hasPartData = try required(row.boolean(at: index), column)
            case .generation: record.transfer.generation = try required(row.integer(at: index), column)
            case .durableBytes: record.transfer.durableBytes = try required(row.integer(at: index), column)
            case .bootID: record.transfer.bootID = try row.text(at: index)
            case .etag: record.transfer.etag = try row.text(at: index)
            case .lastModified: record.transfer.lastModified = try row.text(at: index)
            case .totalBytes: record.transfer.totalBytes = try row.integer(at: index)
            case .contentEncoding: record.transfer.contentEncoding = try row.text(at: index)
            case .finalURL: record.transfer.finalURL = try row.text(at: index)
            case .finalizing: record.transfer.finalizing = try required(row.boolean(at: index), column)
            case .segments:
                if let plan = try row.text(at: index) {
                    record.transfer.segments = try json.decode([Segment].self, from: Data(plan.utf8))
                }
            }
        }
        return record
    }

    /// ``decode(_:)``, or the damaged stand-in when the row cannot be read, so one bad row never stops the rest.
    mutating func decodeOrMarkDamaged(_ row: some StoredRow) -> DownloadRecord {
        do {
            return try decode(row)
        } catch {
            let id = (try? row.integer(at: 0)).flatMap { $0 } ?? 0
            let url = (try? row.text(at: 1)).flatMap { $0 }
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
