import Crypto
import Foundation

/// Computes the `Authorization` value that answers a Digest challenge (RFC 7616): MD5 and SHA-256, their `-sess`
/// variants, `qop=auth` or none, and `userhash`.
struct DigestAuthorization: Sendable, Hashable {
    enum Algorithm: String, Sendable {
        case md5 = "MD5"
        case md5Session = "MD5-sess"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-sess"

        var isSession: Bool { self == .md5Session || self == .sha256Session }

        func hash(_ text: String) -> String {
            let data = Data(text.utf8)
            switch self {
            case .md5, .md5Session: return Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined()
            case .sha256, .sha256Session: return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            }
        }

        /// Stronger algorithms are preferred when a server offers several.
        var strength: Int { self == .sha256 || self == .sha256Session ? 2 : 1 }
    }

    var realm: String
    var nonce: String
    var opaque: String?
    var algorithm: Algorithm
    /// Whether the server asked for `qop=auth` (else the RFC 2069 form).
    var usesQualityOfProtection: Bool
    var userHash: Bool

    /// The Digest parameters of `challenge`; nil when it is not Digest or asks for what Haul cannot do (an unknown
    /// algorithm, or only `auth-int`).
    init?(_ challenge: AuthenticationChallenge) {
        guard challenge.scheme == "digest", let nonce = challenge.parameters["nonce"] else { return nil }
        let name = challenge.parameters["algorithm"] ?? "MD5"
        guard let algorithm = Algorithm.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
            return nil
        }
        let qop = challenge.parameters["qop"]?.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }
        if let qop, !qop.contains("auth") { return nil }
        self.realm = challenge.parameters["realm"] ?? ""
        self.nonce = nonce
        self.opaque = challenge.parameters["opaque"]
        self.algorithm = algorithm
        self.usesQualityOfProtection = qop != nil
        self.userHash = challenge.parameters["userhash"]?.lowercased() == "true"
    }

    /// The header value for `method uri` (the request target: path and query) with `credentials`, the
    /// `nonceCount`-th use of this nonce and a client nonce.
    func value(
        method: String, uri: String, credentials: Credentials, nonceCount: Int, clientNonce: String
    ) -> String {
        var ha1 = algorithm.hash("\(credentials.user):\(realm):\(credentials.password)")
        if algorithm.isSession { ha1 = algorithm.hash("\(ha1):\(nonce):\(clientNonce)") }
        let ha2 = algorithm.hash("\(method):\(uri)")
        let count = String(format: "%08x", nonceCount)
        let response =
            usesQualityOfProtection
            ? algorithm.hash("\(ha1):\(nonce):\(count):\(clientNonce):auth:\(ha2)")
            : algorithm.hash("\(ha1):\(nonce):\(ha2)")
        let user = userHash ? algorithm.hash("\(credentials.user):\(realm)") : credentials.user
        var fields = [
            "username=\(Self.quoted(user))", "realm=\(Self.quoted(realm))", "nonce=\(Self.quoted(nonce))",
            "uri=\(Self.quoted(uri))", "algorithm=\(algorithm.rawValue)", "response=\"\(response)\"",
        ]
        if usesQualityOfProtection { fields += ["qop=auth", "nc=\(count)", "cnonce=\"\(clientNonce)\""] }
        if let opaque { fields.append("opaque=\(Self.quoted(opaque))") }
        if userHash { fields.append("userhash=true") }
        return "Digest " + fields.joined(separator: ", ")
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

extension DigestAuthorization.Algorithm: CaseIterable {}
