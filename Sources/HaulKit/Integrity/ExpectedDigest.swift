import Foundation

/// A digest a source states for some bytes: the algorithm, its value, and who said it (the header it came in, or
/// "you" for a `--checksum`).
struct ExpectedDigest: Sendable, Hashable {
    var algorithm: DigestAlgorithm
    var bytes: [UInt8]
    /// The header it came in (`Repr-Digest`, `Content-MD5`, …).
    var header: String

    var hex: String { DigestHasher.hex(bytes) }

    /// A digest from base64 text; nil unless it decodes to the algorithm's length.
    init?(_ algorithm: DigestAlgorithm, base64: some StringProtocol, header: String) {
        guard let data = Data(base64Encoded: String(base64.trimmingWhitespace())), data.count == algorithm.byteCount
        else { return nil }
        self.init(algorithm, bytes: Array(data), header: header)
    }

    init(_ algorithm: DigestAlgorithm, bytes: [UInt8], header: String) {
        self.algorithm = algorithm
        self.bytes = bytes
        self.header = header
    }

    /// The one of `digests` to verify: the first by ``DigestAlgorithm/preference``.
    static func preferred(_ digests: some Collection<ExpectedDigest>) -> ExpectedDigest? {
        for algorithm in DigestAlgorithm.preference {
            if let digest = digests.first(where: { $0.algorithm == algorithm }) { return digest }
        }
        return nil
    }
}
