import Foundation

/// Extracts the file name from a `Content-Disposition` header (RFC 6266), leniently, as browsers do.
///
/// `filename*` (RFC 8187, `UTF-8''na%C3%AFve.txt` or `ISO-8859-1''…`) wins over `filename`. Quoted strings may
/// contain `;` and backslash escapes; unquoted values may contain spaces; a missing closing quote is tolerated.
/// The result is not sanitised: pass it through ``FileNamer``.
enum ContentDisposition {
    static func fileName(from header: String) -> String? {
        var plain: String?
        var extended: String?
        for (name, value) in parameters(header) {
            switch name {
            case "filename*": extended = extended ?? decodeExtended(value)
            case "filename": plain = plain ?? value
            default: break
            }
        }
        let chosen = extended ?? plain
        guard let chosen, !chosen.isEmpty else { return nil }
        return chosen
    }

    /// The `name=value` parameters after the disposition type, names lowercased, quoted values unescaped.
    static func parameters(_ header: String) -> [(String, String)] {
        var result: [(String, String)] = []
        var scalars = Substring(header)
        // Skip the disposition type.
        guard let firstSemicolon = scalars.firstIndex(of: ";") else { return [] }
        scalars = scalars[scalars.index(after: firstSemicolon)...]
        while !scalars.isEmpty {
            scalars = scalars.drop(while: { $0 == " " || $0 == "\t" || $0 == ";" })
            guard let equals = scalars.firstIndex(of: "=") else { break }
            let name = scalars[..<equals].trimmingWhitespace().lowercased()
            scalars = scalars[scalars.index(after: equals)...].drop(while: { $0 == " " || $0 == "\t" })
            var value = ""
            if scalars.first == "\"" {
                value = QuotedString.read(from: &scalars)
                if let semicolon = scalars.firstIndex(of: ";") {
                    scalars = scalars[semicolon...]
                } else {
                    scalars = scalars[scalars.endIndex...]
                }
            } else {
                let end = scalars.firstIndex(of: ";") ?? scalars.endIndex
                value = scalars[..<end].trimmingWhitespace()
                scalars = scalars[end...]
            }
            if !name.isEmpty { result.append((name, value)) }
        }
        return result
    }

    /// Decodes an RFC 8187 `charset'language'percent-encoded` value; nil if malformed or an unknown charset.
    static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        guard let bytes = percentDecodedBytes(parts[2]) else { return nil }
        switch charset {
        case "utf-8", "utf8": return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1", "latin1", "iso8859-1": return String(bytes.map { Character(Unicode.Scalar($0)) })
        default: return nil
        }
    }

    /// Percent-decodes `text` to bytes; nil if a `%` is not followed by two hex digits.
    static func percentDecodedBytes(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
