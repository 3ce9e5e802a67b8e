import Crypto
import Foundation
import NIOHTTP1

extension TestOrigin {
    /// The realm of every challenge.
    public static let realm = "haul-test"

    /// Hands out a new Digest nonce: the next request with the old one is refused as stale.
    public func rotateNonce() {
        nonceState.withLock { $0 = String(UInt64.random(in: 1...UInt64.max), radix: 16) }
    }

    /// The challenge; `stale=true` when `request` answered an older Digest nonce.
    static func challenge(for authentication: Authentication, nonce: String, request: HTTPRequestHead) -> String {
        let stale =
            request.headers.first(name: "Authorization").map { header in
                header.hasPrefix("Digest ") && digestFields(header.dropFirst(7))["nonce"] != nonce
            } ?? false
        switch authentication {
        case .basic:
            return "Basic realm=\"\(realm)\", charset=\"UTF-8\""
        case .digest(_, _, let algorithm, let qop):
            return "Digest realm=\"\(realm)\", nonce=\"\(nonce)\", opaque=\"opaque-value\", algorithm=\(algorithm)"
                + (qop ? ", qop=\"auth\"" : "") + (stale ? ", stale=true" : "")
        }
    }

    /// Whether `request` carries the right `Authorization` (for Digest: with the current nonce, recomputed here).
    static func authorizes(_ request: HTTPRequestHead, _ authentication: Authentication, nonce: String) -> Bool {
        guard let header = request.headers.first(name: "Authorization") else { return false }
        switch authentication {
        case .basic(let user, let password):
            return header == "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        case .digest(let user, let password, let algorithm, let qop):
            guard header.hasPrefix("Digest ") else { return false }
            let fields = digestFields(header.dropFirst("Digest ".count))
            func hash(_ text: String) -> String {
                let data = Data(text.utf8)
                let digest: [UInt8] =
                    algorithm.uppercased().hasPrefix("SHA-256")
                    ? Array(SHA256.hash(data: data)) : Array(Insecure.MD5.hash(data: data))
                return digest.map { String(format: "%02x", $0) }.joined()
            }
            guard fields["username"] == user, fields["realm"] == realm, fields["nonce"] == nonce,
                fields["uri"] == request.uri, fields["opaque"] == "opaque-value",
                fields["algorithm"]?.uppercased() == algorithm.uppercased()
            else { return false }
            var ha1 = hash("\(user):\(realm):\(password)")
            if algorithm.lowercased().hasSuffix("-sess") { ha1 = hash("\(ha1):\(nonce):\(fields["cnonce"] ?? "")") }
            let ha2 = hash("GET:\(request.uri)")
            let expected: String
            if qop {
                guard fields["qop"] == "auth", let count = fields["nc"], let cnonce = fields["cnonce"] else {
                    return false
                }
                expected = hash("\(ha1):\(nonce):\(count):\(cnonce):auth:\(ha2)")
            } else {
                expected = hash("\(ha1):\(nonce):\(ha2)")
            }
            return fields["response"] == expected
        }
    }

    /// `name=value` and `name="value"` pairs, comma-separated.
    private static func digestFields(_ text: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        var rest = text
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        value.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            fields[name] = value
        }
        return fields
    }
}
