import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    @Suite("haul and mirrors")
    struct MirrorCommandTests {
        @Test("--mirror and TAB-separated mirrors in -i spread a file over two origins; a bad mirror is reported")
        func mirrors() async throws {
            let primary = try await TestOrigin.start()
            let mirror = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let size = 5 * 1024 * 1024 + 7
            for origin in [primary, mirror] {
                origin.serve("/a.bin", size: size)
                origin.serve("/b.bin", size: size)
                origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 }
            }
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-x", "4", primary.url("/a.bin").absoluteString, "--mirror",
                    mirror.url("/a.bin").absoluteString,
                    "--mirror", primary.url("/missing.bin").absoluteString, "-o", directory.file("a.bin").path,
                    "--state-dir", directory.file("state").path,
                ])
            #expect(result.status == 0, "\(result.error)")
            #expect(mirror.bodyBytesSent(to: "/a.bin") > 64 * 1024)
            #expect(
                result.error.contains("no longer using the mirror") && result.error.contains("404"),
                "\(result.error)")

            let list = directory.file("urls.txt")
            try "\(primary.url("/b.bin").absoluteString)\t\(mirror.url("/b.bin").absoluteString) out=b.bin\n"
                .write(to: list, atomically: true, encoding: .utf8)
            let fromList = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "-x", "4", "-i", list.path, "-d", directory.path, "--state-dir",
                    directory.file("state").path,
                ])
            #expect(fromList.status == 0, "\(fromList.error)")
            #expect(mirror.bodyBytesSent(to: "/b.bin") > 64 * 1024)
            for name in ["a.bin", "b.bin"] {
                let data = try Data(contentsOf: directory.file(name))
                #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil, "\(name)")
            }
            let refused = try await ChildProcess.run(
                "haul",
                [
                    "get", primary.url("/a.bin").absoluteString, primary.url("/b.bin").absoluteString, "--mirror",
                    mirror.url("/a.bin").absoluteString, "--state-dir", directory.file("s2").path,
                ])
            #expect(refused.status == 64)
            await primary.stop()
            await mirror.stop()
        }

        @Test(
            "a mirror whose bytes differ after its first 64 KiB is dropped, and haul exits 0 only over the right bytes")
        func corruptMirror() async throws {
            let primary = try await TestOrigin.start()
            let mirror = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let size = 6 * 1024 * 1024 + 11
            primary.serve("/c.bin", size: size)
            var bad = TestOrigin.Resource(size: size)
            bad.corrupted = (size / 2 - 4096)..<size
            mirror.serve("/c.bin", bad)
            for origin in [primary, mirror] { origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 } }
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-x", "2", primary.url("/c.bin").absoluteString, "--mirror",
                    mirror.url("/c.bin").absoluteString, "-o", directory.file("c.bin").path,
                    "--state-dir", directory.file("state").path,
                ])
            #expect(result.status == 0, "\(result.error)")
            #expect(result.error.contains("no longer using the mirror"), "\(result.error)")
            let data = try Data(contentsOf: directory.file("c.bin"))
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            await primary.stop()
            await mirror.stop()
        }
    }
}

extension EndToEnd.MirrorCommandTests {
    @Test("haul get URL --mirror GOOD with a primary that answers 404: exit 0, the mirror's bytes, per-source bytes")
    func primaryMissing() async throws {
        let primary = try await TestOrigin.start()
        let mirror = try await TestOrigin.start()
        let directory = TemporaryDirectory()
        let size = 2 * 1024 * 1024 + 9
        mirror.serve("/a.bin", size: size)
        let result = try await ChildProcess.run(
            "haul",
            [
                "get", "--json", primary.url("/a.bin").absoluteString, "--mirror", mirror.url("/a.bin").absoluteString,
                "-o", directory.file("a.bin").path, "--state-dir", directory.file("state").path,
            ])
        #expect(result.status == 0, "\(result.error)")
        let data = try Data(contentsOf: directory.file("a.bin"))
        #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
        let summary = try #require(result.output.split(separator: "\n").last.map(String.init))
        #expect(
            summary.contains("\"sources\":[{\"bytes\":\(size),\"url\":\"\(mirror.url("/a.bin").absoluteString)\"}]"),
            "\(summary)")
        await primary.stop()
        await mirror.stop()
    }
}
