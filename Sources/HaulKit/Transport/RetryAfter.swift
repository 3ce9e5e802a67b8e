import Foundation

/// Parses `Retry-After` (RFC 9110 §10.2.3): delay-seconds, or an HTTP date.
enum RetryAfter {
    /// The delay the header asks for, relative to `now`; nil when absent or unparsable. Dates in the past give 0.
    static func delay(from header: String, now: Date) -> Duration? {
        let text = header.trimmingWhitespace()
        if let seconds = ContentRange.number(text.utf8) {
            return .seconds(seconds)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        let seconds = max(0, date.timeIntervalSince(now))
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }
}

/// HTTP dates: IMF-fixdate, and the obsolete RFC 850 and asctime forms that recipients must accept.
enum HTTPDate {
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]

    static func parse(_ text: String) -> Date? {
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// Formats `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
