import Foundation

/// The host of a URL given as text, lowercased: what the scheduler and the store's host limits group downloads by.
enum URLHost {
    /// The lowercased host of `url` ("" if it has none or is not a URL), as Foundation's `URL(string:)?.host` gives
    /// it. A plain `http` or `https` URL (no user; a name or IPv4 address; a port of at most five digits; after the
    /// host only the characters RFC 3986 allows) is read from its bytes; anything else goes to Foundation.
    static func lowercased(in url: String) -> String {
        if let host = plain(url) { return host }
        return URL(string: url)?.host?.lowercased() ?? ""
    }

    /// The host of a plain `http` or `https` URL, lowercased; nil for any other text.
    static func plain(_ url: String) -> String? {
        var url = url
        return url.withUTF8 { bytes -> String? in
            // "http://" or "https://", in any case.
            var index = 0
            func skip(_ expected: UInt8, caseless: Bool) -> Bool {
                guard index < bytes.count, (caseless ? bytes[index] | 0x20 : bytes[index]) == expected else {
                    return false
                }
                index += 1
                return true
            }
            for letter in "http".utf8 where !skip(letter, caseless: true) { return nil }
            _ = skip(UInt8(ascii: "s"), caseless: true)
            for mark in "://".utf8 where !skip(mark, caseless: false) { return nil }

            // The host: a name or an IPv4 address, up to a port, a path, a query or a fragment.
            let hostStart = index
            var uppercase = false
            scan: while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                    UInt8(ascii: "."):
                    break
                case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    uppercase = true
                case UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"):
                    break scan
                default:
                    return nil  // a user, an IPv6 literal, percent-encoding, a name Foundation would have to check
                }
                index += 1
            }
            let hostEnd = index
            // An empty name, or one ending in ".", is left to Foundation.
            guard hostEnd > hostStart, bytes[hostEnd - 1] != UInt8(ascii: ".") else { return nil }
            if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
                index += 1
                let portStart = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                    index += 1
                }
                guard index - portStart <= 5 else { return nil }
                guard
                    index == bytes.count
                        || [UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")].contains(bytes[index])
                else { return nil }
            }
            // The path, query and fragment: only what RFC 3986 allows (Foundation would re-encode anything else).
            for byte in bytes[index...] where byte >= 0x80 || !uriCharacters[Int(byte)] { return nil }

            let host = UnsafeBufferPointer(rebasing: bytes[hostStart..<hostEnd])
            guard uppercase else { return String(decoding: host, as: UTF8.self) }
            return String(unsafeUninitializedCapacity: host.count) { buffer in
                for (offset, byte) in host.enumerated() {
                    buffer[offset] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                }
                return host.count
            }
        }
    }

    /// RFC 3986's unreserved and reserved characters, and `%`, by ASCII code.
    private static let uriCharacters: [Bool] = (0..<128).map { code in
        let character = Character(Unicode.Scalar(UInt8(code)))
        return character.isASCII && (character.isLetter || character.isNumber)
            || "-._~:/?#[]@!$&'()*+,;=%".contains(character)
    }
}
