import Foundation

/// Per-download choices made when a download is added.
public struct DownloadOptions: Sendable, Hashable, Codable {
    /// What to do when the remote file changes while it downloads.
    public enum ChangePolicy: String, Sendable, Hashable, Codable {
        /// Discard the partial data and download the new version from the start (default).
        case restart
        /// Fail with ``DownloadError/Code/resourceChanged`` and keep the partial data.
        case fail
    }

    /// A digest the finished file must match; a mismatch fails the download and leaves nothing at the destination.
    public var checksum: Checksum?
    /// Extra request headers, sent with every request of this download (e.g. `Authorization`).
    public var headers: [HTTPHeaderField]
    /// Higher runs first; equal priorities run in the order they were added. Default 0.
    public var priority: Int
    /// A cap on this download's speed in bytes per second; `nil` for none.
    public var speedLimit: Int64?
    /// Free-form data the application keeps with the download (a title, an image URL, a price…).
    public var metadata: [String: String]
    /// What to do when the remote file changes mid-download. Default ``ChangePolicy/restart``.
    public var onResourceChange: ChangePolicy
    /// Connections fetching parts of the file at once, 1…32 (capped by the manager's per-host limit). Used when the
    /// size is known and the server honours ranges; otherwise one connection. Default 1.
    public var connections: Int
    /// The user name and password for a server that asks for them (Basic or Digest); sent only to the origin of the
    /// added URL unless ``redirects`` trusts others. Credentials written in the URL are moved here when it is added.
    public var credentials: Credentials?
    /// What redirects may take along; see ``RedirectPolicy``.
    public var redirects: RedirectPolicy
    /// Other URLs of the same file. A download with several ``connections`` spreads its segments over them once
    /// each has shown the same length and the same bytes as the file so far; a mirror that fails or differs is
    /// dropped for the run (``DownloadEvent/Change/mirrorDropped(_:reason:)``), never spliced in. Credentials and
    /// custom headers go to a mirror only when it shares the download URL's origin, or ``redirects`` trusts others.
    public var mirrors: [URL]
    /// What to do when the destination already holds a file Haul did not write; see ``ExistingFilePolicy``.
    public var existingFile: ExistingFilePolicy
    /// Whether the digests servers state (`Repr-Digest`, `Content-Digest`, `Digest`, `Content-MD5`, `x-goog-hash`,
    /// `x-amz-checksum-*`) are verified, and whether Haul asks for them. Default ``ServerDigestPolicy/verify``.
    public var serverDigests: ServerDigestPolicy
    /// The hashes of the file's pieces (from a Metalink): each piece is checked as the file is written behind the
    /// writer, and one that fails is fetched again alone, from another source where there is one.
    public var pieces: PieceHashes?
    /// Who gave ``checksum``: the user (default) or a Metalink; the final word says which.
    public var checksumSource: DownloadVerification.Source
    /// How often this download's requests may go to its host, on top of the manager's
    /// ``DownloadManager/Configuration/requestPacing`` (the stricter wins). Default nil: the manager's alone.
    public var requestPacing: RequestPacing?
    /// Whether the number of connections is chosen by measurement (`-x auto`): the download starts with one and
    /// doubles them while the total speed grows by a fifth or more and the host allows, up to ``connections``; see
    /// `docs/politeness.md`. Default false: ``connections`` is the number.
    public var adaptiveConnections: Bool

    /// Whether this request names its connection count (``connections`` and ``adaptiveConnections``), for adding a
    /// download that exists already (see ``DownloadManager/add(_:to:options:paused:)``): `true` (`-x 1`, `-x auto`)
    /// replaces its count even with the default values; `false` (no `-x`: the front end's own default) leaves it as it
    /// is; `nil` (the default) judges by the values, a count other than the default replacing it. Never stored.
    public var connectionCountGiven: Bool?

    /// The ceiling of ``adaptiveConnections`` that Haul's front ends give a download that names no count (`haul get`
    /// without `-x`, the daemon's `addUri` without `split`): ``connections`` is set to it.
    public static let automaticConnectionCeiling = 16

    public init(
        checksum: Checksum? = nil,
        headers: [HTTPHeaderField] = [],
        priority: Int = 0,
        speedLimit: Int64? = nil,
        metadata: [String: String] = [:],
        onResourceChange: ChangePolicy = .restart,
        connections: Int = 1,
        credentials: Credentials? = nil,
        redirects: RedirectPolicy = .init(),
        mirrors: [URL] = [],
        existingFile: ExistingFilePolicy = .automatic,
        serverDigests: ServerDigestPolicy = .verify,
        pieces: PieceHashes? = nil,
        checksumSource: DownloadVerification.Source = .user,
        requestPacing: RequestPacing? = nil,
        adaptiveConnections: Bool = false
    ) {
        self.requestPacing = requestPacing
        self.adaptiveConnections = adaptiveConnections
        self.checksum = checksum
        self.headers = headers
        self.priority = priority
        self.speedLimit = speedLimit
        self.metadata = metadata
        self.onResourceChange = onResourceChange
        self.connections = connections
        self.credentials = credentials
        self.redirects = redirects
        self.mirrors = mirrors
        self.existingFile = existingFile
        self.serverDigests = serverDigests
        self.pieces = pieces
        self.checksumSource = checksumSource
    }

    private enum CodingKeys: String, CodingKey {
        case checksum, headers, priority, speedLimit, metadata, onResourceChange, connections, credentials, redirects
        case mirrors, existingFile, serverDigests, pieces, checksumSource, requestPacing
        case adaptiveConnections
    }

    /// Decodes options stored by any version: fields added later get their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        checksum = try container.decodeIfPresent(Checksum.self, forKey: .checksum)
        headers = try container.decodeIfPresent([HTTPHeaderField].self, forKey: .headers) ?? []
        priority = try container.decodeIfPresent(Int.self, forKey: .priority) ?? 0
        speedLimit = try container.decodeIfPresent(Int64.self, forKey: .speedLimit)
        metadata = try container.decodeIfPresent([String: String].self, forKey: .metadata) ?? [:]
        onResourceChange = try container.decodeIfPresent(ChangePolicy.self, forKey: .onResourceChange) ?? .restart
        connections = try container.decodeIfPresent(Int.self, forKey: .connections) ?? 1
        credentials = try container.decodeIfPresent(Credentials.self, forKey: .credentials)
        redirects = try container.decodeIfPresent(RedirectPolicy.self, forKey: .redirects) ?? .init()
        requestPacing = try container.decodeIfPresent(RequestPacing.self, forKey: .requestPacing)
        adaptiveConnections = try container.decodeIfPresent(Bool.self, forKey: .adaptiveConnections) ?? false
        mirrors = try container.decodeIfPresent([URL].self, forKey: .mirrors) ?? []
        existingFile = try container.decodeIfPresent(ExistingFilePolicy.self, forKey: .existingFile) ?? .automatic
        serverDigests = try container.decodeIfPresent(ServerDigestPolicy.self, forKey: .serverDigests) ?? .verify
        pieces = try container.decodeIfPresent(PieceHashes.self, forKey: .pieces)
        checksumSource =
            try container.decodeIfPresent(DownloadVerification.Source.self, forKey: .checksumSource) ?? .user
    }
}

/// One request header line.
public struct HTTPHeaderField: Sendable, Hashable, Codable, CustomStringConvertible {
    public var name: String
    public var value: String

    /// Whether the header carries a credential: `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, or a
    /// name that contains `token`, `key`, `secret`, `password` or `session`.
    public var isCredential: Bool {
        let lowered = name.lowercased()
        if ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains(lowered) { return true }
        return ["token", "key", "secret", "password", "session"].contains { lowered.contains($0) }
    }

    /// The value to show: a credential's value is masked (its scheme, such as `Bearer`, is kept).
    public var displayValue: String {
        guard isCredential else { return value }
        let scheme = value.split(separator: " ", maxSplits: 1)
        return scheme.count == 2 && scheme[0].count < 16 ? "\(scheme[0]) ***" : "***"
    }

    /// `Name: value`, with a credential masked; safe to print or log.
    public var description: String { "\(name): \(displayValue)" }

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value`.
    public init(parsing line: String) throws(DownloadError) {
        guard let colon = line.firstIndex(of: ":") else {
            throw .invalidRequest("a header must look like 'Name: value', got '\(line)'")
        }
        let name = line[..<colon].trimmingWhitespace()
        let value = line[line.index(after: colon)...].trimmingWhitespace()
        let tokenCharacters = CharacterSet(charactersIn: "!#$%&'*+-.^_`|~").union(.alphanumerics)
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCII && tokenCharacters.contains($0) }),
            !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" })
        else {
            throw .invalidRequest("'\(line)' is not a valid HTTP header")
        }
        self.init(name: name, value: value)
    }
}
