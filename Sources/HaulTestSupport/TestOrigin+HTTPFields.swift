import Foundation

/// The request and response fields the origin reads and writes itself.
extension TestOrigin {
    /// `bytes=N-` or `bytes=N-M`; nil for anything else (then the range is ignored, as RFC 9110 allows).
    static func parseRange(_ header: String, size: Int) -> (start: Int, end: Int?)? {
        guard header.hasPrefix("bytes=") else { return nil }
        let spec = header.dropFirst(6)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-"), let start = Int(spec[..<dash]) else {
            return nil
        }
        let endText = spec[spec.index(after: dash)...]
        if endText.isEmpty { return (start, nil) }
        guard let end = Int(endText), end >= start else { return nil }
        return (start, end)
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
