import Foundation
import Synchronization

/// Answers authentication challenges and remembers them per origin, so the next request to that origin (another
/// segment, a resume) carries its `Authorization` at once instead of being refused first.
///
/// Basic and Digest (MD5, SHA-256 and their `-sess` forms); Digest is preferred when a server offers both.
final class Authenticator: Sendable {
    private enum Scheme: Sendable {
        case basic
        case digest(DigestAuthorization, used: Int)
    }

    /// What each origin (`scheme://host:port`) last asked for.
    private let spaces = Mutex<[String: Scheme]>([:])

    /// The `Authorization` value for a request to `url` with `credentials`, when its origin asked for one before.
    func authorization(for url: URL, method: String = "GET", credentials: Credentials) -> String? {
        let origin = Self.origin(of: url)
        let scheme: Scheme? = spaces.withLock { spaces in
            guard case .digest(let digest, let used)? = spaces[origin] else { return spaces[origin] }
            spaces[origin] = .digest(digest, used: used + 1)
            return .digest(digest, used: used + 1)
        }
        switch scheme {
        case nil: return nil
        case .basic: return Self.basic(credentials)
        case .digest(let digest, let count):
            return digest.value(
                method: method, uri: Self.target(of: url), credentials: credentials, nonceCount: count,
                clientNonce: Self.clientNonce())
        }
    }

    /// Learns what a `401` response from `url` asks for. Returns whether a request with credentials is worth
    /// sending: false when the challenge is one Haul cannot answer, or when credentials for it were just refused
    /// (`sentAuthorization`) and the server did not merely say the nonce went stale.
    func learn(_ challengeHeaders: [String], from url: URL, sentAuthorization: Bool) -> Bool {
        let challenges = AuthenticationChallenge.parse(challengeHeaders)
        let digest = challenges.compactMap(DigestAuthorization.init).max {
            $0.algorithm.strength < $1.algorithm.strength
        }
        let stale =
            challenges.contains { $0.scheme == "digest" && $0.parameters["stale"]?.lowercased() == "true" }
        let scheme: Scheme
        if let digest {
            scheme = .digest(digest, used: 0)
        } else if challenges.contains(where: { $0.scheme == "basic" }) {
            scheme = .basic
        } else {
            return false
        }
        if sentAuthorization, !(stale && digest != nil) {
            return false
        }
        spaces.withLock { $0[Self.origin(of: url)] = scheme }
        return true
    }

    static func basic(_ credentials: Credentials) -> String {
        "Basic " + Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
    }

    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? "http"
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// The request target: the path (at least `/`) and the query, as sent on the request line.
    static func target(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? url.path
        let query = components?.percentEncodedQuery.map { "?" + $0 } ?? ""
        return (path.isEmpty ? "/" : path) + query
    }

    private static func clientNonce() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}
