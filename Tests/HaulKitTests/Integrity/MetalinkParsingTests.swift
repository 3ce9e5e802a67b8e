import Foundation
import Testing

@testable import HaulKit

/// Reading Metalinks: RFC 5854 and version 3, and hostile documents refused with a reason.
@Suite("Metalink documents")
struct MetalinkParsingTests {
    static let sha256 = String(repeating: "ab", count: 32)

    static func parse(_ text: String) throws(DownloadError) -> Metalink {
        try Metalink(parsing: Data(text.utf8))
    }

    @Test("RFC 5854: files, sizes, hashes, piece hashes, URLs by priority (non-http skipped)")
    func rfc5854() throws {
        let metalink = try Self.parse(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink">
              <published>2026-01-01T00:00:00Z</published>
              <file name="debian/disk.iso">
                <size>1048577</size>
                <hash type="sha-256">\(Self.sha256.uppercased())</hash>
                <hash type="sha-512">notahexdigestbutanunknowntype</hash>
                <pieces length="524288" type="sha-1">
                  <hash>\(String(repeating: "01", count: 20))</hash>
                  <hash>\(String(repeating: "02", count: 20))</hash>
                  <hash>\(String(repeating: "03", count: 20))</hash>
                </pieces>
                <url priority="2" location="de">https://b.example/disk.iso</url>
                <url>http://c.example/disk.iso</url>
                <url priority="1">https://a.example/disk.iso</url>
                <url priority="1">ftp://ftp.example/disk.iso</url>
                <metaurl mediatype="torrent">https://a.example/disk.torrent</metaurl>
              </file>
              <file name="readme.txt"><url>https://a.example/readme.txt</url></file>
            </metalink>
            """.replacingOccurrences(of: "notahexdigestbutanunknowntype", with: String(repeating: "cd", count: 64)))
        #expect(metalink.version == .rfc5854)
        #expect(metalink.files.map(\.name) == ["debian/disk.iso", "readme.txt"])
        let file = metalink.files[0]
        #expect(file.size == 1_048_577)
        #expect(file.hashes[.sha256] == Self.sha256)
        #expect(file.hashes[.sha512] == String(repeating: "cd", count: 64))
        #expect(file.preferredHash?.algorithm == .sha256)
        #expect(file.pieces?.algorithm == .sha1 && file.pieces?.length == 524_288 && file.pieces?.hashes.count == 3)
        #expect(file.pieces?.range(of: 2, size: 1_048_577) == 1_048_576..<1_048_577)
        #expect(
            file.sources.map(\.url.host) == ["a.example", "b.example", "c.example"], "\(file.sources)")
        #expect(file.sources[1].location == "de")
        let options = file.options(DownloadOptions(connections: 4))
        #expect(options.checksum?.hex == Self.sha256 && options.checksumSource == .metalink)
        #expect(options.mirrors.map(\.host) == ["b.example", "c.example"])
        #expect(options.connections == 4 && options.pieces == file.pieces)
    }

    @Test("version 3: verification, resources by preference")
    func version3() throws {
        let metalink = try Self.parse(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <metalink version="3.0" xmlns="http://www.metalinker.org/">
              <files>
                <file name="a.bin">
                  <size>10</size>
                  <verification>
                    <hash type="md5">\(String(repeating: "0f", count: 16))</hash>
                    <pieces length="262144" type="sha256"><hash piece="0">\(Self.sha256)</hash></pieces>
                  </verification>
                  <resources>
                    <url type="http" preference="10">http://low.example/a.bin</url>
                    <url type="http" preference="100">http://high.example/a.bin</url>
                  </resources>
                </file>
              </files>
            </metalink>
            """)
        #expect(metalink.version == .v3)
        let file = try #require(metalink.files.first)
        #expect(file.hashes[.md5] == String(repeating: "0f", count: 16))
        #expect(file.pieces?.hashes == [Self.sha256])
        #expect(file.sources.map(\.url.host) == ["high.example", "low.example"])
    }

    /// Documents that must be refused, and a word the reason must contain.
    static let hostile: [(String, String)] = [
        (
            """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="&lol2;"><url>http://a/x</url></file></metalink>
            """, "entit"
        ),
        (
            """
            <?xml version="1.0"?>
            <!doctype metalink SYSTEM "file:///etc/passwd">
            <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="x"><url>http://a/x</url></file></metalink>
            """, "document type"
        ),
        (
            """
            <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="../../etc/cron.d/x"><url>http://a/x</url></file></metalink>
            """, "leaves its directory"
        ),
        (
            """
            <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="/etc/passwd"><url>http://a/x</url></file></metalink>
            """, "absolute"
        ),
        ("<html><body>not found</body></html>", "not metalink"),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"x\"><size>-1</size></file>", "size"),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"x\">", "well-formed"),
        (
            "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"x\"><hash type=\"sha-256\">12</hash>"
                + "</file></metalink>", "hex"
        ),
        (
            "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">" + String(repeating: "<a>", count: 40)
                + String(repeating: "</a>", count: 40) + "</metalink>", "deep"
        ),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"></metalink>", "no file"),
    ]

    @Test("hostile or broken documents are refused with a reason", arguments: 0..<10)
    func refused(_ index: Int) {
        let (text, reason) = Self.hostile[index]
        do {
            _ = try Self.parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.summary.contains(reason), "\(error.summary)")
        }
    }

    @Test("a document larger than the limit is refused before it is parsed")
    func tooLarge() {
        let huge = Data(count: Metalink.maximumSize + 1)
        #expect(throws: DownloadError.self) { try Metalink(parsing: huge) }
    }
}
