import Foundation

/// A parsed `Content-Range` header (RFC 9110 §14.4): either a satisfied range or `bytes */size` from a 416.
struct ContentRange: Equatable, Sendable {
    /// First byte of the range; nil for the unsatisfied form `bytes */size`.
    var first: Int64?
    /// Last byte of the range, inclusive; nil for the unsatisfied form.
    var last: Int64?
    /// The complete length; nil when the server sent `*`.
    var completeLength: Int64?

    /// Parses `bytes 0-499/1234`, `bytes 0-499/*` and `bytes */1234`; nil for anything else.
    init?(parsing header: String) {
        let text = header.trimmingWhitespace()
        guard text.count > 6, text.prefix(6).lowercased() == "bytes " else { return nil }
        let rest = text.dropFirst(6).trimmingWhitespace()
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let rangePart = rest[..<slash]
        let lengthPart = rest[rest.index(after: slash)...]

        if lengthPart == "*" {
            completeLength = nil
        } else {
            guard let length = ContentRange.number(lengthPart) else { return nil }
            completeLength = length
        }
        if rangePart == "*" {
            guard completeLength != nil else { return nil }
            first = nil
            last = nil
            return
        }
        guard let dash = rangePart.firstIndex(of: "-"),
            let first = ContentRange.number(rangePart[..<dash]),
            let last = ContentRange.number(rangePart[rangePart.index(after: dash)...]),
            first <= last
        else { return nil }
        if let completeLength, last >= completeLength { return nil }
        self.first = first
        self.last = last
    }

    init(first: Int64?, last: Int64?, completeLength: Int64?) {
        self.first = first
        self.last = last
        self.completeLength = completeLength
    }

    /// Bytes in the range; nil for the unsatisfied form.
    var length: Int64? {
        guard let first, let last else { return nil }
        return last - first + 1
    }

    /// Digits only (no sign, no spaces), at most 18 of them so the value fits in Int64.
    static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }
}
