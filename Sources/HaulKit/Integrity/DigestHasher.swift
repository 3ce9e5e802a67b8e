import Crypto

/// One running digest of any ``DigestAlgorithm``, behind one type.
struct DigestHasher {
    private enum Storage {
        case sha256(SHA256)
        case sha512(SHA512)
        case sha1(Insecure.SHA1)
        case md5(Insecure.MD5)
        case crc32c(CRC32C)
    }

    private var storage: Storage
    let algorithm: DigestAlgorithm

    init(_ algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        switch algorithm {
        case .sha256: storage = .sha256(SHA256())
        case .sha512: storage = .sha512(SHA512())
        case .sha1: storage = .sha1(Insecure.SHA1())
        case .md5: storage = .md5(Insecure.MD5())
        case .crc32c: storage = .crc32c(CRC32C())
        }
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        // The hasher is moved out of `storage` while it is updated (a CRC32C, which holds no reference, stands in), so
        // it is its context's only holder: swift-crypto copies a shared context before updating it, an allocation and
        // a copy for every chunk.
        let current = storage
        storage = .crc32c(CRC32C())
        switch consume current {
        case .sha256(var hasher):
            hasher.update(bufferPointer: bytes)
            storage = .sha256(hasher)
        case .sha512(var hasher):
            hasher.update(bufferPointer: bytes)
            storage = .sha512(hasher)
        case .sha1(var hasher):
            hasher.update(bufferPointer: bytes)
            storage = .sha1(hasher)
        case .md5(var hasher):
            hasher.update(bufferPointer: bytes)
            storage = .md5(hasher)
        case .crc32c(var hasher):
            hasher.update(bytes)
            storage = .crc32c(hasher)
        }
    }

    /// The digest's bytes (a CRC32C big-endian, as `x-goog-hash` and S3 send it).
    func finalize() -> [UInt8] { finalize { Array($0) } }

    /// The digest in lowercase hexadecimal.
    func finalizeHex() -> String { finalize(Self.hex) }

    /// Hands the digest's bytes to `body`, in place: a digest copied into an array element by element was four
    /// allocations.
    private func finalize<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        switch storage {
        case .sha256(let hasher): hasher.finalize().withUnsafeBytes(body)
        case .sha512(let hasher): hasher.finalize().withUnsafeBytes(body)
        case .sha1(let hasher): hasher.finalize().withUnsafeBytes(body)
        case .md5(let hasher): hasher.finalize().withUnsafeBytes(body)
        case .crc32c(let hasher): hasher.bigEndianBytes.withUnsafeBytes(body)
        }
    }

    /// The digest of `bytes` in one go.
    static func digest(_ algorithm: DigestAlgorithm, of bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = DigestHasher(algorithm)
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Lowercase hexadecimal, written straight into the string's storage (one allocation).
    static func hex(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes(hex) }

    /// Lowercase hexadecimal, written straight into the string's storage (one allocation).
    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            for (index, byte) in bytes.enumerated() {
                text[2 * index] = hexDigit(byte >> 4)
                text[2 * index + 1] = hexDigit(byte & 0x0F)
            }
            return bytes.count * 2
        }
    }

    /// The ASCII lowercase hexadecimal digit of `value` (0–15).
    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x61 - 10 + value }
}
