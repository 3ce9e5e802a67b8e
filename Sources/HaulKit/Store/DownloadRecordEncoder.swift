import Foundation

/// A value as stored in one column, the same for every backend: each store maps it to its own types (SQLite: dates
/// as text; PostgreSQL: `timestamptz`).
package enum StoredValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case boolean(Bool)
    case date(Date)

    package init(_ value: Int64?) { self = value.map(StoredValue.integer) ?? .null }
    package init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    package init(_ value: String?) { self = value.map(StoredValue.text) ?? .null }
    package init(_ value: Bool?) { self = value.map(StoredValue.boolean) ?? .null }
    package init(_ value: Date?) { self = value.map(StoredValue.date) ?? .null }
}

/// Turns ``DownloadRecord`` fields into the values stored for them, fast enough for thousands of writes a second:
/// options encoded once per value, dates (for SQLite) as text without a `DateFormatter`.
///
/// What it writes reads back equal through ``DownloadRecordDecoder`` (a test checks every column).
package struct DownloadRecordEncoder {
    private var options: [DownloadOptions: String] = [:]
    /// The last record's options and their text: records of one batch share their options' storage.
    private var lastOptions: (options: OutOfLine<DownloadOptions>, text: String)?
    /// The last requested destination and its text: a batch usually has one.
    private var lastDestination: (value: DownloadDestination, text: String)?
    /// The last verification and its text: the files of a batch are mostly verified alike (or not at all, alike).
    private var lastVerification: (value: DownloadVerification, text: String)?
    private let json = StoredJSON.encoder()

    package init() {}

    /// The values of `columns` for `record`, in order.
    mutating func storedValues(_ columns: [DownloadColumn], of record: DownloadRecord) throws -> [StoredValue] {
        var values: [StoredValue] = []
        values.reserveCapacity(columns.count)
        try storeValues(columns, of: record, in: &values)
        return values
    }

    /// The values of `columns` for `record`, in order, in `values`: emptied first, keeping its room, so that one array
    /// serves every record a statement writes.
    mutating func storeValues(
        _ columns: [DownloadColumn], of record: DownloadRecord, in values: inout [StoredValue]
    ) throws {
        values.removeAll(keepingCapacity: true)
        try appendValues(columns, of: record, to: &values)
    }

    /// Appends the values of `columns` for `record`, in order, to `values`.
    package mutating func appendValues(
        _ columns: [DownloadColumn], of record: DownloadRecord, to values: inout [StoredValue]
    ) throws {
        for column in columns { values.append(try value(column, of: record)) }
    }

    mutating func value(_ column: DownloadColumn, of record: DownloadRecord) throws -> StoredValue {
        switch column {
        case .id: StoredValue(record.id)
        case .url: StoredValue(record.url)
        case .requestedDestination:
            if let destination = record.requestedDestination {
                StoredValue(try Self.cachedText(of: destination, last: &lastDestination, json: json))
            } else {
                StoredValue.null
            }
        case .destinationPath: StoredValue(record.destinationPath)
        case .options: StoredValue(try optionsText(record.storedOptions))
        case .state: StoredValue(record.state.rawValue)
        case .createdAt: StoredValue(record.createdAt)
        case .updatedAt: StoredValue(record.updatedAt)
        case .startedAt: StoredValue(record.startedAt)
        case .completedAt: StoredValue(record.completedAt)
        case .errorCode: StoredValue(record.errorColumns?.code)
        case .errorSummary: StoredValue(record.errorColumns?.summary)
        case .errorSuggestion: StoredValue(record.errorColumns?.suggestion)
        case .errorTransient: StoredValue(record.errorColumns?.transient)
        case .errorHTTPStatus: StoredValue(record.errorColumns?.httpStatus)
        case .hasPartData: StoredValue(record.transfer.hasPartData)
        case .generation: StoredValue(record.transfer.generation)
        case .durableBytes: StoredValue(record.transfer.durableBytes)
        case .bootID: StoredValue(record.transfer.bootID)
        case .etag: StoredValue(record.transfer.etag)
        case .lastModified: StoredValue(record.transfer.lastModified)
        case .totalBytes: StoredValue(record.transfer.totalBytes)
        case .contentEncoding: StoredValue(record.transfer.contentEncoding)
        case .finalURL: StoredValue(record.transfer.finalURL)
        case .finalizing: StoredValue(record.transfer.finalizing)
        case .segments: StoredValue(try record.transfer.segments.map { try Self.jsonText($0, json) })
        case .owner: StoredValue(record.owner)
        case .fileSize: StoredValue(record.fingerprint?.size)
        case .fileModified: StoredValue(record.fingerprint?.modified)
        case .fileIdentity: StoredValue(record.fingerprint?.identity)
        case .sha256: StoredValue(record.fingerprint?.sha256)
        case .verification:
            if let verification = record.fingerprint?.verification {
                StoredValue(try Self.cachedText(of: verification, last: &lastVerification, json: json))
            } else {
                StoredValue.null
            }
        }
    }

    private mutating func optionsText(_ stored: OutOfLine<DownloadOptions>) throws -> String {
        if let lastOptions, lastOptions.options.isShared(with: stored) { return lastOptions.text }
        let value = stored.value
        let text: String
        if let known = options[value] {
            text = known
        } else {
            text = try Self.jsonText(value, json)
            options[value] = text
        }
        lastOptions = (stored, text)
        return text
    }

    /// The text of `value`: `last`'s when it is the same value, else encoded now and kept as `last`.
    private static func cachedText<Value: Encodable & Equatable>(
        of value: Value, last: inout (value: Value, text: String)?, json: JSONEncoder
    ) throws -> String {
        if let last, last.value == value { return last.text }
        let text = try jsonText(value, json)
        last = (value, text)
        return text
    }

    private static func jsonText(_ value: some Encodable, _ json: JSONEncoder) throws -> String {
        String(decoding: try json.encode(value), as: UTF8.self)
    }

    /// `date` as GRDB stores it: `yyyy-MM-dd HH:mm:ss.SSS` in UTC, to the nearest millisecond (text order is time order).
    static func text(_ date: Date) -> String {
        withText(date) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the UTF-8 bytes of ``text(_:)``, written on the stack (no allocation: the store binds three
    /// dates for every record it writes).
    static func withText<Result>(
        _ date: Date, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows
        -> Result
    {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (days, dayMilliseconds) = milliseconds.floorDivided(by: 86_400_000)
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let seconds = dayMilliseconds / 1000
        guard (0...9999).contains(year) else {
            // Outside four digits (never for a real download): as wide as it takes.
            let fields: [(value: Int64, width: Int, then: UInt8?)] = [
                (year, 4, UInt8(ascii: "-")), (month, 2, UInt8(ascii: "-")), (day, 2, UInt8(ascii: " ")),
                (seconds / 3600, 2, UInt8(ascii: ":")), (seconds / 60 % 60, 2, UInt8(ascii: ":")),
                (seconds % 60, 2, UInt8(ascii: ".")), (dayMilliseconds % 1000, 3, nil),
            ]
            var text = fields.map { field in
                let digits = String(field.value)
                let padded = String(repeating: "0", count: max(0, field.width - digits.count)) + digits
                return padded + (field.then.map { String(UnicodeScalar($0)) } ?? "")
            }.joined()
            return try text.withUTF8(body)
        }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 23) { buffer in
            var index = 0
            func put(_ value: Int64, width: Int, then: UInt8?) {
                var value = value
                for position in stride(from: index + width - 1, through: index, by: -1) {
                    buffer[position] = UInt8(truncatingIfNeeded: 48 + value % 10)
                    value /= 10
                }
                index += width
                if let then {
                    buffer[index] = then
                    index += 1
                }
            }
            put(year, width: 4, then: UInt8(ascii: "-"))
            put(month, width: 2, then: UInt8(ascii: "-"))
            put(day, width: 2, then: UInt8(ascii: " "))
            put(seconds / 3600, width: 2, then: UInt8(ascii: ":"))
            put(seconds / 60 % 60, width: 2, then: UInt8(ascii: ":"))
            put(seconds % 60, width: 2, then: UInt8(ascii: "."))
            put(dayMilliseconds % 1000, width: 3, then: nil)
            return try body(UnsafeBufferPointer(rebasing: buffer[..<index]))
        }
    }
}

extension Int64 {
    /// Quotient rounded down and the non-negative remainder.
    fileprivate func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        let remainder = self % divisor
        return remainder < 0 ? (self / divisor - 1, remainder + divisor) : (self / divisor, remainder)
    }
}
