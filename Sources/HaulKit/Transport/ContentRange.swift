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
    ///
    /// Read as UTF-8 bytes: every part it accepts is ASCII (a response's head is parsed for each small download).
    init?(parsing header: String) {
        let text = header.trimmingWhitespace()
        guard text.utf8.count > 6, text.utf8.prefix(6).elementsEqual("bytes ".utf8, by: Self.equalIgnoringCase)
        else { return nil }
        let rest = text.dropFirst(6).trimmingWhitespace().utf8
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let rangePart = rest[..<slash]
        let lengthPart = rest[rest.index(after: slash)...]

        if lengthPart.elementsEqual("*".utf8) {
            completeLength = nil
        } else {
            guard let length = ContentRange.number(lengthPart) else { return nil }
            completeLength = length
        }
        if rangePart.elementsEqual("*".utf8) {
            guard completeLength != nil else { return nil }
            first = nil
            last = nil
            return
        }
        guard let dash = rangePart.firstIndex(of: UInt8(ascii: "-")),
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
    static func number(_ digits: some Collection<UInt8>) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// `byte` equals `lowercase` (an ASCII lowercase letter or other byte) ignoring ASCII case.
    private static func equalIgnoringCase(_ byte: UInt8, _ lowercase: UInt8) -> Bool {
        byte == lowercase || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") && byte + 0x20 == lowercase)
    }
}
