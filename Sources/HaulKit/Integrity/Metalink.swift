import Foundation

/// A Metalink (RFC 5854 `.meta4`, or version 3 `.metalink`): files, each with its size, hashes, piece hashes and the
/// URLs that serve it, best first.
public struct Metalink: Sendable, Hashable {
    /// One file of a Metalink.
    public struct File: Sendable, Hashable {
        /// Its name: a relative path (`dir/name.iso`), checked to stay inside the directory it is saved in.
        public var name: String
        public var size: Int64?
        /// Whole-file hashes (lowercase hex), by algorithm.
        public var hashes: [DigestAlgorithm: String]
        public var pieces: PieceHashes?
        /// The http(s) URLs that serve it, best first (lowest `priority`; version 3's highest `preference`).
        public var sources: [Source]

        /// The hash to verify it with: SHA-256 first, then the others as for a server's digests.
        public var preferredHash: (algorithm: DigestAlgorithm, hex: String)? {
            for algorithm in DigestAlgorithm.preference {
                if let hex = hashes[algorithm] { return (algorithm, hex) }
            }
            return nil
        }
    }

    /// One URL of a file.
    public struct Source: Sendable, Hashable {
        public var url: URL
        /// 1 is the best; a URL without one comes last.
        public var priority: Int
        /// An ISO 3166 country code, when the Metalink says where it is.
        public var location: String?
    }

    /// The version of the format it was written in.
    public enum Version: String, Sendable, Hashable {
        case rfc5854 = "4"
        case v3 = "3"
    }

    public var version: Version
    public var files: [File]

    /// The largest Metalink read (16 MiB: a 64 GiB file's SHA-256 for every 256 KiB piece fits).
    public static let maximumSize = 16 << 20
    /// At most this many files, URLs per file and pieces per file.
    public static let maximumFiles = 10_000
    public static let maximumSources = 1_000
    public static let maximumPieces = 4_000_000
}

extension Metalink.File {
    /// `base` for this file: its first URL's mirrors are the others (by priority), its best hash that a
    /// ``Checksum`` can hold (SHA-256, SHA-1, MD5) is the checksum, given by the Metalink, and its piece hashes are
    /// checked as it arrives.
    public func options(_ base: DownloadOptions) -> DownloadOptions {
        var options = base
        options.mirrors = sources.dropFirst().map(\.url)
        for algorithm in DigestAlgorithm.preference {
            guard let hex = hashes[algorithm], let checksum = Self.checksum(algorithm, hex) else { continue }
            options.checksum = checksum
            options.checksumSource = .metalink
            break
        }
        options.pieces = pieces
        return options
    }

    private static func checksum(_ algorithm: DigestAlgorithm, _ hex: String) -> Checksum? {
        let known: Checksum.Algorithm
        switch algorithm {
        case .sha256: known = .sha256
        case .sha1: known = .sha1
        case .md5: known = .md5
        case .sha512, .crc32c: return nil
        }
        return try? Checksum(known, hex: hex)
    }
}
