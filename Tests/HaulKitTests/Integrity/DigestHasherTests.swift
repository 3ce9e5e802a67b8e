import Crypto
import Foundation
import NIOCore
import Testing

@testable import HaulKit

/// Digests fed in many pieces match the same digest in one go (each hasher is updated in place, chunk after chunk),
/// and hex is lowercase, two digits a byte.
@Suite("Digest hashers")
struct DigestHasherTests {
    /// 10,000 bytes of a repeating pattern, cut in uneven pieces.
    static let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    @Test("every algorithm, updated piece by piece, gives the digest of the bytes in one go", arguments: [1, 7, 4_096])
    func pieces(size: Int) {
        for algorithm in DigestAlgorithm.allCases {
            var hasher = DigestHasher(algorithm)
            var start = 0
            while start < Self.bytes.count {
                let end = min(start + size, Self.bytes.count)
                Self.bytes[start..<end].withUnsafeBytes { hasher.update($0) }
                start = end
            }
            let whole = Self.bytes.withUnsafeBytes { DigestHasher.digest(algorithm, of: $0) }
            #expect(hasher.finalize() == whole, "\(algorithm) in pieces of \(size)")
            #expect(whole.count == algorithm.byteCount, "\(algorithm)")
        }
    }

    @Test("SHA-256 matches swift-crypto's, and a held body's digests are the same in one chunk or several")
    func sha256() {
        let expected = Self.bytes.withUnsafeBytes { SHA256.hash(data: $0) }.map { String(format: "%02x", $0) }
            .joined()
        #expect(Self.bytes.withUnsafeBytes { DigestHasher.hex(DigestHasher.digest(.sha256, of: $0)) } == expected)
        let chunks = stride(from: 0, to: Self.bytes.count, by: 3_000).map {
            ByteBuffer(bytes: Self.bytes[$0..<min($0 + 3_000, Self.bytes.count)])
        }
        #expect(ChecksumFollower.sha256(of: chunks) == expected)
        let digests = ChecksumFollower.digests(of: chunks, [.sha256, .md5, .sha256])
        #expect(digests.count == 2 && digests[.sha256] == expected)
        #expect(digests[.md5] == ChecksumFollower.digests(of: [ByteBuffer(bytes: Self.bytes)], [.md5])[.md5])
    }

    @Test("hex: lowercase, two digits for every byte value, empty for no bytes")
    func hex() {
        let all = (0...255).map { UInt8($0) }
        #expect(DigestHasher.hex(all) == all.map { String(format: "%02x", $0) }.joined())
        #expect(DigestHasher.hex([]) == "")
        #expect(DigestHasher.hex([0x0A, 0xF0]) == "0af0")
    }
}
