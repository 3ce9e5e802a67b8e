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
        switch storage {
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
    func finalize() -> [UInt8] {
        switch storage {
        case .sha256(let hasher): Array(hasher.finalize())
        case .sha512(let hasher): Array(hasher.finalize())
        case .sha1(let hasher): Array(hasher.finalize())
        case .md5(let hasher): Array(hasher.finalize())
        case .crc32c(let hasher): hasher.bigEndianBytes
        }
    }

    /// The digest of `bytes` in one go.
    static func digest(_ algorithm: DigestAlgorithm, of bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = DigestHasher(algorithm)
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Lowercase hexadecimal.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
