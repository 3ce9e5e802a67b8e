import Foundation
import GRDB

/// Turns ``DownloadRecord`` fields into the values stored for them, fast enough for thousands of writes a second:
/// dates as GRDB's text (`yyyy-MM-dd HH:mm:ss.SSS`, UTC) without a `DateFormatter`, options encoded once per value.
///
/// What it writes reads back equal through ``DownloadRecordDecoder`` (a test checks every column).
struct DownloadRecordEncoder {
    private var options: [DownloadOptions: String] = [:]
    private let json = StoredJSON.encoder()

    /// The values of `columns` for `record`, in order.
    mutating func values(
        _ columns: [DownloadColumn], of record: DownloadRecord
    ) throws -> [(any DatabaseValueConvertible)?] {
        try columns.map { try value($0, of: record) }
    }

    mutating func value(_ column: DownloadColumn, of record: DownloadRecord) throws -> (any DatabaseValueConvertible)? {
        switch column {
        case .id: record.id
        case .url: record.url
        case .requestedDestination: try record.requestedDestination.map(jsonText)
        case .destinationPath: record.destinationPath
        case .options: try optionsText(record.options)
        case .state: record.state.rawValue
        case .createdAt: Self.text(record.createdAt)
        case .updatedAt: Self.text(record.updatedAt)
        case .startedAt: record.startedAt.map(Self.text)
        case .completedAt: record.completedAt.map(Self.text)
        case .errorCode: record.errorCode
        case .errorSummary: record.errorSummary
        case .errorSuggestion: record.errorSuggestion
        case .errorTransient: record.errorTransient
        case .errorHTTPStatus: record.errorHTTPStatus
        case .hasPartData: record.transfer.hasPartData
        case .generation: record.transfer.generation
        case .durableBytes: record.transfer.durableBytes
        case .bootID: record.transfer.bootID
        case .etag: record.transfer.etag
        case .lastModified: record.transfer.lastModified
        case .totalBytes: record.transfer.totalBytes
        case .contentEncoding: record.transfer.contentEncoding
        case .finalURL: record.transfer.finalURL
        case .finalizing: record.transfer.finalizing
        case .segments: try record.transfer.segments.map(jsonText)
        }
    }

    private mutating func optionsText(_ value: DownloadOptions) throws -> String {
        if let known = options[value] { return known }
        let text = try jsonText(value)
        options[value] = text
        return text
    }

    private func jsonText(_ value: some Encodable) throws -> String {
        String(decoding: try json.encode(value), as: UTF8.self)
    }

    /// `date` as GRDB stores it: `yyyy-MM-dd HH:mm:ss.SSS` in UTC, to the nearest millisecond (text order is time order).
    static func text(_ date: Date) -> String {
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
        var text = ""
        text.reserveCapacity(23)
        func append(_ value: Int64, width: Int) {
            let digits = String(value)
            if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
            text += digits
        }
        append(year, width: 4)
        text += "-"
        append(month, width: 2)
        text += "-"
        append(day, width: 2)
        text += " "
        append(seconds / 3600, width: 2)
        text += ":"
        append(seconds / 60 % 60, width: 2)
        text += ":"
        append(seconds % 60, width: 2)
        text += "."
        append(dayMilliseconds % 1000, width: 3)
        return text
    }
}

extension Int64 {
    /// Quotient rounded down and the non-negative remainder.
    fileprivate func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        let remainder = self % divisor
        return remainder < 0 ? (self / divisor - 1, remainder + divisor) : (self / divisor, remainder)
    }
}
