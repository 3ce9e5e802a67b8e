/// What a completed download's bytes were verified against, and by whom: the final word `haul get` prints, `haul
/// info` and `list --json` show and the daemon reports.
public struct DownloadVerification: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Who stated a digest.
    public enum Source: String, Sendable, Hashable, Codable {
        /// The user (`--checksum`, ``DownloadOptions/checksum``).
        case user
        /// The server, in a response header.
        case server
        /// A Metalink file.
        case metalink
    }

    /// One digest the file (or its parts) matched.
    public struct Check: Sendable, Hashable, Codable {
        public var algorithm: DigestAlgorithm
        public var source: Source
        /// The header it came in, for a server's digest (`Repr-Digest`, `Content-MD5`, …).
        public var header: String?
        /// How many parts it covered, for the digests of each response's own content; nil for the whole file.
        public var parts: Int?

        public init(algorithm: DigestAlgorithm, source: Source, header: String? = nil, parts: Int? = nil) {
            self.algorithm = algorithm
            self.source = source
            self.header = header
            self.parts = parts
        }

        /// "sha-256 from the server (Repr-Digest)", "sha-256 you gave", "md5 of 4 parts from the server (Content-MD5)".
        public var description: String {
            let unit = source == .metalink ? "piece" : "part"
            let what = parts.map { "\(algorithm) of \($0) \(unit)\($0 == 1 ? "" : "s")" } ?? algorithm.rawValue
            switch source {
            case .user: return "\(what) you gave"
            case .server: return "\(what) from the server" + (header.map { " (\($0))" } ?? "")
            case .metalink: return "\(what) from the Metalink"
            }
        }
    }

    /// What matched; empty when nothing was verified.
    public var checks: [Check]
    /// Why nothing was verified ("the server sent no digest"); nil when something was.
    public var unverifiedBecause: String?

    public init(checks: [Check], unverifiedBecause: String? = nil) {
        self.checks = checks
        self.unverifiedBecause = checks.isEmpty ? unverifiedBecause ?? "no digest was known" : nil
    }

    public var isVerified: Bool { !checks.isEmpty }

    /// `verification` (nil: none) with `check` first, once: a completed file found to match a checksum given later.
    static func adding(_ check: Check, to verification: DownloadVerification?) -> DownloadVerification {
        let checks = verification?.checks ?? []
        guard !checks.contains(check) else { return verification ?? DownloadVerification(checks: checks) }
        return DownloadVerification(checks: [check] + checks)
    }

    /// "verified: sha-256 from the server (Repr-Digest)", or "not verified: the server sent no digest".
    public var description: String {
        guard !checks.isEmpty else { return "not verified: \(unverifiedBecause ?? "no digest was known")" }
        return "verified: " + checks.map(\.description).joined(separator: ", ")
    }
}
