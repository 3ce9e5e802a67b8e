import Crypto
import Foundation

extension TestContent {
    /// A Metalink (RFC 5854) for one file of ``TestContent`` of `size` bytes named `name`: its SHA-256, the SHA-256
    /// of each `pieceLength` piece (when given), and `urls` with priorities 1, 2, 3… in order.
    public static func metalink(
        name: String, size: Int, urls: [URL], pieceLength: Int? = nil, version: Int = 0
    ) -> String {
        let bytes = bytes(0..<size, version: version)
        func hex(_ digest: some Sequence<UInt8>) -> String { digest.map { String(format: "%02x", $0) }.joined() }
        var pieces = ""
        if let pieceLength {
            let hashes = stride(from: 0, to: size, by: pieceLength).map { start in
                "      <hash>\(hex(SHA256.hash(data: bytes[start..<min(size, start + pieceLength)])))</hash>"
            }
            pieces =
                "    <pieces length=\"\(pieceLength)\" type=\"sha-256\">\n" + hashes.joined(separator: "\n")
                + "\n    </pieces>\n"
        }
        let sources = urls.enumerated().map { index, url in
            "    <url priority=\"\(index + 1)\">\(url.absoluteString)</url>"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink">
              <file name="\(name)">
                <size>\(size)</size>
                <hash type="sha-256">\(hex(SHA256.hash(data: bytes)))</hash>
            \(pieces)\(sources.joined(separator: "\n"))
              </file>
            </metalink>
            """
    }
}
