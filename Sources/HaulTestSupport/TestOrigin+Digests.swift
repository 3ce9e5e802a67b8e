import Crypto
import Foundation

extension TestOrigin {
    /// A digest header the origin sends with a resource, computed from its true content (``TestContent``), right or
    /// deliberately wrong (its first byte flipped), so a test can see each one verified and each one fail.
    public enum DigestHeader: Sendable, Hashable, CaseIterable {
        /// RFC 9530 `Repr-Digest: sha-256=:…:` (the whole file).
        case reprDigest
        /// RFC 9530 `Content-Digest: sha-256=:…:` (this response's bytes: a part for a `206`).
        case contentDigest
        /// RFC 3230 `Digest: SHA-256=…` (the whole file), as mirrorbits sends it.
        case digest
        /// `Content-MD5` (this response's bytes).
        case contentMD5
        /// Google Cloud Storage's `x-goog-hash: crc32c=…, md5=…` (the whole object).
        case googHash
        /// S3's `x-amz-checksum-sha256` with `x-amz-checksum-type: FULL_OBJECT`.
        case amazonSHA256
        /// S3's `x-amz-checksum-crc32c` with `x-amz-checksum-type: FULL_OBJECT`.
        case amazonCRC32C
        /// S3's `x-amz-checksum-sha256` of a multipart object (`COMPOSITE`, `…-3`): not of the whole object.
        case amazonComposite
    }

    /// A digest header to send, and whether its value is wrong.
    public struct DigestField: Sendable, Hashable {
        public var header: DigestHeader
        public var wrong: Bool

        public init(_ header: DigestHeader, wrong: Bool = false) {
            self.header = header
            self.wrong = wrong
        }
    }
}

extension TestOrigin.Resource {
    /// The digest fields of a response carrying bytes `first...last` of this resource (version `version`).
    func digestFields(first: Int, last: Int, version: Int) -> [(String, String)] {
        guard !digests.isEmpty, !gzipped, body == nil else { return [] }
        func whole(_ hash: (Data) -> [UInt8]) -> [UInt8] { hash(Data(TestContent.bytes(0..<size, version: version))) }
        func part(_ hash: (Data) -> [UInt8]) -> [UInt8] {
            hash(Data(TestContent.bytes(first..<max(first, last + 1), version: version)))
        }
        let sha256: (Data) -> [UInt8] = { Array(SHA256.hash(data: $0)) }
        let md5: (Data) -> [UInt8] = { Array(Insecure.MD5.hash(data: $0)) }
        let crc32c: (Data) -> [UInt8] = { data in
            let value = TestOrigin.crc32c(data)
            return [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
        }
        return digests.flatMap { field -> [(String, String)] in
            func text(_ bytes: [UInt8]) -> String {
                var bytes = bytes
                if field.wrong { bytes[0] ^= 0xFF }
                return Data(bytes).base64EncodedString()
            }
            switch field.header {
            case .reprDigest: return [("Repr-Digest", "sha-256=:\(text(whole(sha256))):")]
            case .contentDigest: return [("Content-Digest", "sha-256=:\(text(part(sha256))):")]
            case .digest: return [("Digest", "SHA-256=\(text(whole(sha256)))")]
            case .contentMD5: return [("Content-MD5", text(part(md5)))]
            case .googHash:
                return [("x-goog-hash", "crc32c=\(text(whole(crc32c)))"), ("x-goog-hash", "md5=\(text(whole(md5)))")]
            case .amazonSHA256:
                return [("x-amz-checksum-sha256", text(whole(sha256))), ("x-amz-checksum-type", "FULL_OBJECT")]
            case .amazonCRC32C:
                return [("x-amz-checksum-crc32c", text(whole(crc32c))), ("x-amz-checksum-type", "FULL_OBJECT")]
            case .amazonComposite:
                return [
                    ("x-amz-checksum-sha256", text(whole(sha256)) + "-3"), ("x-amz-checksum-type", "COMPOSITE"),
                ]
            }
        }
    }
}

extension TestOrigin {
    /// CRC-32C (Castagnoli), bit by bit: test files are small.
    public static func crc32c(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
