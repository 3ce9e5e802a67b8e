/// The hashes of a file's pieces: piece `i` is bytes `i * length ..< min((i + 1) * length, size)`.
public struct PieceHashes: Sendable, Hashable, Codable {
    public var algorithm: DigestAlgorithm
    public var length: Int64
    /// Lowercase hexadecimal, one per piece, in order.
    public var hashes: [String]

    public init(algorithm: DigestAlgorithm, length: Int64, hashes: [String]) {
        self.algorithm = algorithm
        self.length = length
        self.hashes = hashes
    }

    /// The bytes of piece `index` in a file of `size` bytes.
    public func range(of index: Int, size: Int64) -> Range<Int64> {
        let start = Int64(index) * length
        return start..<min(start + length, size)
    }
}
