import Foundation
import NIOHTTP1
import Testing

@testable import HaulKit

/// Reading the digest headers of a response: RFC 9530's structured fields, RFC 3230, Content-MD5, GCS and S3.
@Suite("Server digest headers")
struct ServerDigestsTests {
    /// SHA-256 of "hello" in base64, and its bytes in hex.
    static let helloSHA256 = "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="
    static let helloSHA256Hex = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

    static func digests(_ fields: [(String, String)]) -> ServerDigests {
        ServerDigests(fields: fields.map { (name: $0.0, value: $0.1) })
    }

    @Test("Repr-Digest and Content-Digest are structured dictionaries; unknown algorithms are ignored")
    func structured() {
        let parsed = Self.digests([
            ("Repr-Digest", "unixsum=:AAA=:, sha-256=:\(Self.helloSHA256):"),
            ("content-digest", "sha-256=:\(Self.helloSHA256):"),
        ])
        #expect(parsed.representation.map(\.algorithm) == [.sha256])
        #expect(parsed.representation.first?.hex == Self.helloSHA256Hex)
        #expect(parsed.representation.first?.header == "Repr-Digest")
        #expect(parsed.content.map(\.header) == ["Content-Digest"])
    }

    @Test(
        "a malformed structured field, a value that is not a byte sequence, or one of the wrong length is ignored",
        arguments: [
            "sha-256=\(helloSHA256)", "sha-256=:\(helloSHA256)", "sha-256=:AAAA:", "sha-256=\"x\"", "sha-256=:***:",
        ])
    func malformed(_ value: String) {
        #expect(Self.digests([("Repr-Digest", value)]).isEmpty)
    }

    @Test("RFC 3230's Digest keeps base64 padding; SHA means SHA-1; names are case-insensitive")
    func rfc3230() {
        let parsed = Self.digests([("Digest", "SHA-256=\(Self.helloSHA256),MD5=XUFAKrxLKna5cZ2REBfFkg==")])
        #expect(parsed.representation.map(\.algorithm) == [.sha256, .md5])
        #expect(DigestAlgorithm(headerName: "SHA") == .sha1)
        #expect(parsed.content.isEmpty)
    }

    @Test("Content-MD5 is the response's own content; x-goog-hash on several lines is one field")
    func md5AndGoogle() {
        let parsed = Self.digests([
            ("Content-MD5", "XUFAKrxLKna5cZ2REBfFkg=="), ("x-goog-hash", "crc32c=mnG7TA=="),
            ("x-goog-hash", "md5=XUFAKrxLKna5cZ2REBfFkg=="),
        ])
        #expect(parsed.content.map(\.algorithm) == [.md5])
        #expect(parsed.representation.map(\.algorithm) == [.crc32c, .md5])
    }

    @Test("x-amz-checksum-* counts only for a full-object checksum")
    func amazon() {
        let full = Self.digests([("x-amz-checksum-sha256", Self.helloSHA256), ("x-amz-checksum-type", "FULL_OBJECT")])
        #expect(full.representation.map(\.algorithm) == [.sha256])
        let untyped = Self.digests([("x-amz-checksum-crc32c", "mnG7TA==")])
        #expect(untyped.representation.map(\.algorithm) == [.crc32c])
        let composite = Self.digests([
            ("x-amz-checksum-sha256", Self.helloSHA256 + "-3"), ("x-amz-checksum-type", "COMPOSITE"),
        ])
        #expect(composite.isEmpty)
        #expect(Self.digests([("x-amz-checksum-sha256", Self.helloSHA256 + "-3")]).isEmpty)
    }

    @Test("the preferred digest is SHA-256 (computed anyway), then SHA-512, SHA-1, MD5, CRC32C")
    func preference() {
        let parsed = Self.digests([("x-goog-hash", "crc32c=mnG7TA==, md5=XUFAKrxLKna5cZ2REBfFkg==")])
        #expect(ExpectedDigest.preferred(parsed.representation)?.algorithm == .md5)
    }

    @Test("CRC-32C of the standard check string, in one piece and in many")
    func crc32c() {
        let bytes = Array("123456789".utf8)
        var whole = CRC32C()
        bytes.withUnsafeBytes { whole.update($0) }
        #expect(whole.value == 0xE306_9283)
        let long = (0..<100_003).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var once = CRC32C()
        long.withUnsafeBytes { once.update($0) }
        var pieces = CRC32C()
        for start in stride(from: 0, to: long.count, by: 1013) {
            long[start..<min(long.count, start + 1013)].withUnsafeBytes { pieces.update($0) }
        }
        #expect(once.value == pieces.value)
        #expect(DigestHasher.hex(whole.bigEndianBytes) == "e3069283")
    }

    @Test("a response's digest fields are found among its others whatever their case; a checksum type alone is none")
    func amongResponseFields() {
        let found = ServerDigests(
            HTTPHeaders([
                ("Content-Length", "5"), ("REPR-DIGEST", "sha-256=:\(Self.helloSHA256):"),
                ("Content-Type", "text/plain"),
                ("Content-Digest-Extra", "sha-256=:AAAA:"), ("Digests", "SHA-256=AAAA"),
            ]))
        #expect(found.representation.map(\.hex) == [Self.helloSHA256Hex])
        #expect(found.representation.first?.header == "Repr-Digest", "named as the RFC spells it")
        #expect(found.content.isEmpty, "fields whose names only begin like a digest field's are not read")
        #expect(ServerDigests(HTTPHeaders([("X-Amz-Checksum-Type", "FULL_OBJECT"), ("ETag", "\"x\"")])).isEmpty)
        #expect(ServerDigests(HTTPHeaders([("Server", "nginx"), ("Accept-Ranges", "bytes")])).isEmpty)
    }
}
