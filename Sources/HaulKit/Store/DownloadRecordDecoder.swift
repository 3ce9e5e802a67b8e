import Foundation
import GRDB

/// One stored row, read by column position (the order of ``DownloadColumn/allCases``); each backend's row type
/// conforms. A value of the wrong type throws, never traps.
package protocol StoredRow {
    func integer(at index: Int) throws -> Int64?
    func text(at index: Int) throws -> String?
    func boolean(at index: Int) throws -> Bool?
    func date(at index: Int) throws -> Date?
}

/// Reads ``DownloadRecord``s from rows of ``DownloadColumn/select`` quickly enough for a queue of 100,000: columns
/// by position (the order of ``DownloadColumn/allCases``), and each JSON column (options, destination) decoded once
/// per distinct text, since a batch added together shares them. Any backend's rows (``StoredRow``).
///
/// What ``DownloadRecordEncoder`` writes reads back equal (a test checks every column).
package struct DownloadRecordDecoder {
    private var options: [String: OutOfLine<DownloadOptions>] = [:]
    /// The last options text and its value: rows added together come one after another.
    private var lastOptions: (text: String, value: OutOfLine<DownloadOptions>)?
    private var destinations: [String: DownloadDestination] = [:]
    /// The last destination text and its value, as for the options (hashing each row's text was 2% of a start-up).
    private var lastDestination: (text: String, value: DownloadDestination)?
    private let json = StoredJSON.decoder()

    package init() {}

    /// Decodes a row of ``DownloadColumn/select``; throws on any value of the wrong type, never traps.
    mutating func decode(_ row: some StoredRow) throws -> DownloadRecord {
        var record = DownloadRecord(
            url: "", sharing: Self.noOptions, state: .failed, createdAt: .distantPast, updatedAt: .distantPast)
        func required<T>(_ value: T?, _ column: DownloadColumn) throws -> T {
            guard let value else { throw DownloadError.internalError("\(column.rawValue) is missing") }
            return value
        }
        // The job's and the error's columns go to the record only if it has any: a download that never ran shares
        // the empty transfer box, and one that never failed has no error box.
        var transfer = TransferRecord()
        var error = DownloadRecord.ErrorColumns()
        var fileSize: Int64?
        var verification: DownloadVerification?
        var fileModified: Int64?
        var fileIdentity: String?
        var sha256: String?
        for (index, column) in DownloadColumn.allCases.enumerated() {
            switch column {
            case .id: record.id = try row.integer(at: index)
            case .url: record.url = try required(row.text(at: index), column)
            case .requestedDestination: record.requestedDestination = try destination(try row.text(at: index))
            case .destinationPath: record.destinationPath = try row.text(at: index)
            case .options: record.storedOptions = try options(try required(row.text(at: index), column))
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
            case .errorCode: error.code = try row.integer(at: index).map(Int.init)
            case .errorSummary: error.summary = try row.text(at: index)
            case .errorSuggestion: error.suggestion = try row.text(at: index)
            case .errorTransient: error.transient = try row.boolean(at: index)
            case .errorHTTPStatus: error.httpStatus = try row.integer(at: index).map(Int.init)
            case .hasPartData: transfer.hasPartData = try required(row.boolean(at: index), column)
            case .generation: transfer.generation = try required(row.integer(at: index), column)
            case .durableBytes: transfer.durableBytes = try required(row.integer(at: index), column)
            case .bootID: transfer.bootID = try row.text(at: index)
            case .etag: transfer.etag = try row.text(at: index)
            case .lastModified: transfer.lastModified = try row.text(at: index)
            case .totalBytes: transfer.totalBytes = try row.integer(at: index)
            case .contentEncoding: transfer.contentEncoding = try row.text(at: index)
            case .finalURL: transfer.finalURL = try row.text(at: index)
            case .finalizing: transfer.finalizing = try required(row.boolean(at: index), column)
            case .segments:
                if let plan = try row.text(at: index) {
                    transfer.segments = try json.decode([Segment].self, from: Data(plan.utf8))
                }
            case .owner: record.owner = try row.text(at: index)
            case .fileSize: fileSize = try row.integer(at: index)
            case .fileModified: fileModified = try row.integer(at: index)
            case .fileIdentity: fileIdentity = try row.text(at: index)
            case .sha256: sha256 = try row.text(at: index)
            case .verification:
                if let text = try row.text(at: index) {
                    verification = try? json.decode(DownloadVerification.self, from: Data(text.utf8))
                }
            }
        }
        if let fileSize, let fileModified, let fileIdentity {
            record.fingerprint = FileFingerprint(
                size: fileSize, modified: fileModified, identity: fileIdentity, sha256: sha256,
                verification: verification)
        }
        if transfer != TransferRecord() { record.transfer = transfer }
        record.errorColumns = error
        return record
    }

    /// ``decode(_:)``, or the damaged stand-in when the row cannot be read, so one bad row never stops the rest.
    package mutating func decodeOrMarkDamaged(_ row: some StoredRow) -> DownloadRecord {
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

    private static let noOptions = OutOfLine(DownloadOptions())

    private mutating func options(_ text: String) throws -> OutOfLine<DownloadOptions> {
        if let lastOptions, lastOptions.text == text { return lastOptions.value }
        let value: OutOfLine<DownloadOptions>
        if let known = options[text] {
            value = known
        } else {
            value = OutOfLine(try json.decode(DownloadOptions.self, from: Data(text.utf8)))
            options[text] = value
        }
        lastOptions = (text, value)
        return value
    }

    private mutating func destination(_ text: String?) throws -> DownloadDestination? {
        guard let text else { return nil }
        if let lastDestination, lastDestination.text == text { return lastDestination.value }
        let value: DownloadDestination
        if let known = destinations[text] {
            value = known
        } else {
            value = try json.decode(DownloadDestination.self, from: Data(text.utf8))
            destinations[text] = value
        }
        lastDestination = (text, value)
        return value
    }

    /// The date of `yyyy-MM-dd HH:mm:ss.SSS` (UTC), the form ``DownloadRecordEncoder/text(_:)`` writes; nil for any
    /// other text. GRDB's parser goes through `Calendar`, a tenth of the time of reading 100,000 records.
    static func storedDate(_ bytes: UnsafeRawBufferPointer) -> Date? {
        guard bytes.count == 23, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            bytes[19] == UInt8(ascii: ".")
        else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in start..<start + count {
                let digit = Int64(bytes[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
            let minute = number(14, 2), let second = number(17, 2), let millisecond = number(20, 3),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        // Days since 1970-01-01 from a civil date (Howard Hinnant's algorithm), the inverse of the encoder's.
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let milliseconds = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Hands each record `sql` (a ``DownloadColumn/select`` with its clauses) finds to `body`, read from SQLite's
    /// stepping statement (``SQLiteStatementRow``).
    static func forEach(
        _ db: Database, sql: String, arguments: StatementArguments = [], _ body: (DownloadRecord) -> Void
    ) throws {
        var decoder = DownloadRecordDecoder()
        try forEach(try db.makeStatement(sql: sql), arguments: arguments, &decoder, body)
    }

    /// Runs `statement` (prepared from a ``DownloadColumn/select``) with `arguments`, and hands each record it finds
    /// to `body`, decoded with `decoder` (kept across runs of a statement run many times).
    static func forEach(
        _ statement: Statement, arguments: StatementArguments, _ decoder: inout DownloadRecordDecoder,
        _ body: (DownloadRecord) -> Void
    ) throws {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        let current = SQLiteStatementRow(statement)
        while try rows.next() != nil { body(decoder.decodeOrMarkDamaged(current)) }
    }

    /// The records `sql` (a ``DownloadColumn/select`` with its clauses) finds.
    static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [DownloadRecord] {
        var records: [DownloadRecord] = []
        try forEach(db, sql: sql, arguments: arguments) { records.append($0) }
        return records
    }
}
