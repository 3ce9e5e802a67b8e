import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// RFC 6249: mirrors the download's own server names, `Link: <…>; rel=duplicate`.
@Suite("Link: rel=duplicate")
struct DuplicateLinkTests {
    @Test("duplicates by pri, relative ones resolved, other relations and schemes ignored")
    func parsing() {
        let base = URL(string: "https://origin.example/dir/file.iso")
        let found = DuplicateLinks.parse(
            [
                "<https://b.example/file.iso>; rel=duplicate; pri=2; geo=de, <ftp://f.example/file.iso>; rel=duplicate",
                "</other/file.iso>; rel=\"duplicate\"; pri=1, <https://c.example/x.torrent>; rel=describedby",
                "<http://d.example/file.iso>; rel=\"duplicate alternate\"",
            ], base: base)
        #expect(
            found == [
                "https://origin.example/other/file.iso", "https://b.example/file.iso", "http://d.example/file.iso",
            ])
    }

    @Test("a mirror the primary names serves segments, checked and confirmed as any mirror")
    func namedMirrorServes() async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 256 * 1024 }
        let mirror = try await TestOrigin.start()
        let size = 6 * 1024 * 1024 + 3
        mirror.serve("/file.bin", size: size)
        var resource = TestOrigin.Resource(size: size)
        resource.headers = [("Link", "<\(mirror.url("/file.bin").absoluteString)>; rel=duplicate; pri=1")]
        harness.origin.serve("/file.bin", resource)
        for origin in [harness.origin, mirror] { origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 } }
        let id = try await harness.manager.add(harness.origin.url("/file.bin"), options: .init(connections: 4))
        expectContent(try await harness.manager.wait(for: id), size: size)
        #expect(mirror.bodyBytesSent(to: "/file.bin") > 64 * 1024)
        await harness.shutdown()
        await mirror.stop()
    }
}
