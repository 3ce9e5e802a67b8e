/// A number of requests per period: `20/s`, `600/min`, `3000/h` (``RequestRate/init(parsing:)``).
public struct RequestRate: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Requests allowed per ``period``; at least 1.
    public let requests: Int
    /// The period, one of 1 s, 1 min, 1 h.
    public let period: Duration

    /// `requests` per `period` (both positive).
    public init(requests: Int, per period: Duration) throws(DownloadError) {
        guard requests >= 1, requests <= 1_000_000, period > .zero else {
            throw .invalidRequest("a request rate must be 1 to 1000000 requests per positive period")
        }
        self.requests = requests
        self.period = period
    }

    /// Parses `N/s`, `N/min`, `N/h` (also `N/sec`, `N/m`, `N/hour`); a bare `N` is per second.
    public init(parsing text: String) throws(DownloadError) {
        let parts = text.trimmingWhitespace().lowercased().split(separator: "/", omittingEmptySubsequences: false)
        let units: [String: Duration] = [
            "s": .seconds(1), "sec": .seconds(1), "second": .seconds(1), "m": .seconds(60), "min": .seconds(60),
            "minute": .seconds(60), "h": .seconds(3600), "hour": .seconds(3600),
        ]
        guard (1...2).contains(parts.count), let count = Int(parts[0]),
            let period = parts.count == 2 ? units[String(parts[1])] : .seconds(1)
        else {
            throw .invalidRequest("'\(text)' is not a request rate like 20/s, 600/min or 3000/h")
        }
        try self.init(requests: count, per: period)
    }

    /// Requests per second.
    public var perSecond: Double { Double(requests) / period.inSeconds }

    /// The time between two requests at this rate.
    public var interval: Duration { period / requests }

    /// `20/s`, `600/min`, `3000/h`.
    public var description: String {
        let unit = period == .seconds(1) ? "s" : period == .seconds(60) ? "min" : "h"
        return "\(requests)/\(unit)"
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.summary))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
