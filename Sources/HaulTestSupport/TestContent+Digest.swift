import Crypto
import Foundation

extension TestContent {
    /// The SHA-256 of the first `size` bytes of `version`, in lowercase hexadecimal (what `--checksum` is given).
    public static func sha256(size: Int, version: Int = 0) -> String {
        SHA256.hash(data: bytes(0..<size, version: version)).map { String(format: "%02x", $0) }.joined()
    }
}
