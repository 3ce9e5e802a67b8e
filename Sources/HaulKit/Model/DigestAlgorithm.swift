/// A digest algorithm Haul can verify: those servers name in `Repr-Digest`, `Content-Digest`, RFC 3230's `Digest`,
/// `x-goog-hash` and `x-amz-checksum-*`, and those of a `--checksum`.
public enum DigestAlgorithm: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case sha256 = "sha-256"
    case sha512 = "sha-512"
    case sha1 = "sha-1"
    case md5
    case crc32c

    /// The length of a digest in bytes.
    public var byteCount: Int {
        switch self {
        case .sha256: 32
        case .sha512: 64
        case .sha1: 20
        case .md5: 16
        case .crc32c: 4
        }
    }

    public var description: String { rawValue }

    /// Which one is verified when a server names several, best first: SHA-256 (which every download computes anyway,
    /// for its fingerprint), then the stronger or more common others.
    static let preference: [DigestAlgorithm] = [.sha256, .sha512, .sha1, .md5, .crc32c]

    /// The algorithm of a user's checksum.
    init(_ algorithm: Checksum.Algorithm) {
        switch algorithm {
        case .sha256: self = .sha256
        case .sha1: self = .sha1
        case .md5: self = .md5
        }
    }

    /// The algorithm a header names: the keys of RFC 9530's registry (`sha-256`, `sha-512`, `sha` for SHA-1, `md5`,
    /// `crc32c`) and RFC 3230's tokens (`SHA-256`, `SHA`, `MD5`, …), in any case. Nil for any other (`unixsum`,
    /// `adler`), which Haul ignores.
    init?(headerName: some StringProtocol) {
        switch headerName.lowercased() {
        case "sha-256", "sha256": self = .sha256
        case "sha-512", "sha512": self = .sha512
        case "sha", "sha-1", "sha1": self = .sha1
        case "md5": self = .md5
        case "crc32c": self = .crc32c
        default: return nil
        }
    }
}
