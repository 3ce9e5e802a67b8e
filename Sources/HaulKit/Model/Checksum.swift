import Foundation

/// An expected digest of a download's bytes, verified before the file reaches its destination.
public struct Checksum: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A digest algorithm.
    public enum Algorithm: String, Sendable, Hashable, Codable, CaseIterable {
        case sha256, sha1, md5

        /// Length of a digest in hexadecimal characters.
        public var hexLength: Int {
            switch self {
            case .sha256: 64
            case .sha1: 40
            case .md5: 32
            }
        }
    }

    public let algorithm: Algorithm
    /// The digest as lowercase hexadecimal.
    public let hex: String

    /// Creates a checksum; fails with ``DownloadError/Code/invalidRequest`` unless `hex` is a digest of the right length.
    public init(_ algorithm: Algorithm, hex: String) throws(DownloadError) {
        let lowered = hex.lowercased()
        guard lowered.count == algorithm.hexLength, lowered.allSatisfy(\.isHexDigit) else {
            throw .invalidRequest(
                "\(algorithm.rawValue) checksum must be \(algorithm.hexLength) hexadecimal characters, got '\(hex)'")
        }
        self.algorithm = algorithm
        self.hex = lowered
    }

    /// Parses `ALGO=HEX` or `ALGO:HEX`, as in `sha256=9f86d0…`.
    public init(parsing text: String) throws(DownloadError) {
        guard let separator = text.firstIndex(where: { $0 == "=" || $0 == ":" }),
            let algorithm = Algorithm(rawValue: text[..<separator].lowercased().replacingOccurrences(of: "-", with: ""))
        else {
            throw .invalidRequest("checksum must look like sha256=HEX, sha1=HEX or md5=HEX, got '\(text)'")
        }
        try self.init(algorithm, hex: String(text[text.index(after: separator)...]))
    }

    public var description: String { "\(algorithm.rawValue)=\(hex)" }
}
