import Foundation
import HaulKit

/// aria2's option values as Haul reads them: sizes with K/M suffixes, checksums, headers, booleans.
enum Aria2Options {
    /// `1048576`, `1M`, `500K`; 0 means no limit (nil).
    static func speed(_ text: String, option: String) throws(RPCError) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var digits = Substring(trimmed)
        var unit: Int64 = 1
        switch digits.last {
        case "K", "k":
            unit = 1024
            digits = digits.dropLast()
        case "M", "m":
            unit = 1024 * 1024
            digits = digits.dropLast()
        default: break
        }
        guard let value = Int64(digits), value >= 0, value <= Int64.max / unit else {
            throw .failed("\(option) must be a number of bytes per second such as 500K or 2M, got '\(text)'")
        }
        return value == 0 ? nil : value * unit
    }

    /// A whole number in `range`.
    static func integer(_ text: String, option: String, in range: ClosedRange<Int>) throws(RPCError) -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw .failed("\(option) must be \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// Sets `options`' connections from aria2's `split` and `max-connection-per-server`: the smaller of the two when
    /// either is given (aria2's rule, with 32 as the ceiling), chosen by measurement (`-x auto`) when neither is.
    static func setConnections(_ options: inout DownloadOptions, split: Int?, perServer: Int?) {
        if split == nil, perServer == nil {
            options.connections = DownloadOptions.automaticConnectionCeiling
            options.adaptiveConnections = true
            options.connectionCountGiven = false
        } else {
            options.connections = min(split ?? perServer ?? 1, perServer ?? 32)
            options.adaptiveConnections = false
            options.connectionCountGiven = true
        }
    }

    /// `true` or `false`.
    static func boolean(_ text: String, option: String) throws(RPCError) -> Bool {
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default: throw .failed("\(option) must be true or false, got '\(text)'")
        }
    }

    /// `sha-256=HEX` (aria2's names) or Haul's `sha256=HEX`.
    static func checksum(_ text: String) throws(RPCError) -> Checksum {
        do {
            return try Checksum(parsing: text)
        } catch {
            throw .failed("checksum: \(error.summary)")
        }
    }

    /// One `Name: value` header, or several (aria2 takes a string or an array).
    static func headers(_ value: JSONValue) throws(RPCError) -> [HTTPHeaderField] {
        let lines: [String]
        switch value {
        case .string(let line): lines = [line]
        case .array(let items): lines = items.compactMap(\.stringValue)
        default: throw .failed("header must be a string or an array of strings")
        }
        var fields: [HTTPHeaderField] = []
        for line in lines {
            do {
                fields.append(try HTTPHeaderField(parsing: line))
            } catch {
                throw .failed("header: \(error.summary)")
            }
        }
        return fields
    }

    /// A string option's value; aria2 clients send every value as a string, some send numbers and booleans.
    static func text(_ value: JSONValue, option: String) throws(RPCError) -> String {
        switch value {
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        default: throw .failed("\(option) must be a string")
        }
    }

    /// Bytes per second as aria2 shows them: a plain number, 0 for none.
    static func speedText(_ value: Int64?) -> String { String(value ?? 0) }
}
