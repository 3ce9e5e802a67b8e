import Foundation
import GRDB

/// The columns of the `download` table, in the order reads select them.
enum DownloadColumn: String, CaseIterable, Sendable {
    case id, url, requestedDestination, destinationPath, options, state, createdAt, updatedAt, startedAt
    case completedAt, errorCode, errorSummary, errorSuggestion, errorTransient, errorHTTPStatus, hasPartData
    case generation, durableBytes, bootID, etag, lastModified, totalBytes, contentEncoding, finalURL, finalizing
    case segments

    /// Written by the manager at each change of state.
    static let lifecycle: [DownloadColumn] = [
        .state, .updatedAt, .startedAt, .completedAt, .errorCode, .errorSummary, .errorSuggestion, .errorTransient,
        .errorHTTPStatus,
    ]

    /// Written by the manager when the options change (a new speed limit).
    static let settings: [DownloadColumn] = [.options, .updatedAt]

    /// Written by the running job (what is on disk and what was verified).
    static let job: [DownloadColumn] = [
        .destinationPath, .hasPartData, .generation, .durableBytes, .bootID, .etag, .lastModified, .totalBytes,
        .contentEncoding, .finalURL, .finalizing, .segments, .updatedAt,
    ]

    /// `UPDATE download SET a = ?, b = ? WHERE id = ?` for `columns`.
    static func update(_ columns: [DownloadColumn]) -> String {
        "UPDATE download SET \(columns.map { "\($0.rawValue) = ?" }.joined(separator: ", ")) WHERE id = ?"
    }

    static let updateLifecycle = update(lifecycle)
    static let updateSettings = update(settings)
    static let updateJob = update(job)
}

/// Turns ``DownloadRecord`` fields into the values stored for them, fast enough for thousands of writes a second:
/// dates as GRDB's text (`yyyy-MM-dd HH:mm:ss.SSS`, UTC) without a `DateFormatter`, options encoded once per value.
///
/// What it writes reads back equal through ``DownloadRecordDecoder`` (a test checks every column).
struct DownloadRecordEncoder {
    private var options: [DownloadOptions: String] = [:]
    private let json = DownloadRecord.databaseJSONEncoder(for: "options")

    /// The values of `columns` for `record`, in order.
    mutating func values(_ columns: [DownloadColumn], of record: DownloadRecord) throws -> [(any DatabaseValueConvertible)?] {
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
        case .hasPartData: record.hasPartData
        case .generation: record.generation
        case .durableBytes: record.durableBytes
        case .bootID: record.bootID
        case .etag: record.etag
        case .lastModified: record.lastModified
        case .totalBytes: record.totalBytes
        case .contentEncoding: record.contentEncoding
        case .finalURL: record.finalURL
        case .finalizing: record.finalizing
        case .segments: try record.segments.map(jsonText)
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
