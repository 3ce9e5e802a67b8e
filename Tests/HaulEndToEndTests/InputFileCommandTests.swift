import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// `haul get -i FILE` with aria2's per-line options.
    @Suite("haul get -i with per-line options")
    struct InputFileCommandTests {
        @Test("checksum=, header=, connections=, dir=, out= and referer= apply to their own line only")
        func perLineOptions() async throws {
            let origin = try await TestOrigin.start()
            let sizes = [300_000, 200_000, 100_000]
            let urls = sizes.enumerated().map { origin.serve("/f\($0.offset).bin", size: $0.element) }
            let good = TestContent.sha256(size: sizes[0])
            let directory = TemporaryDirectory()
            let sub = directory.file("sub")
            let list = """
                # bulk downloads with checksums
                \(urls[0].absoluteString) out=one.bin
                  checksum=sha-256=\(good)
                  header=X-Token: abc def
                  connections=1
                \(urls[1].absoluteString)
                \tdir=\(sub.path)
                \treferer=http://example.test/page
                \(urls[2].absoluteString) out=three.bin
                  checksum=md5=\(String(repeating: "0", count: 32))

                """
            try list.write(to: directory.file("list.txt"), atomically: true, encoding: .utf8)
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "-x", "4", "-d", directory.path, "-i", directory.file("list.txt").path,
                    "--state-dir", directory.file("state").path,
                ])
            #expect(result.status == 3, "the third file's checksum is wrong: \(result.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("one.bin")), size: sizes[0]) == nil)
            #expect(
                TestContent.firstMismatch(try #require(directory.contents("sub/f1.bin")), size: sizes[1]) == nil)
            #expect(!FileManager.default.fileExists(atPath: directory.file("three.bin").path))

            let first = origin.requests(to: "/f0.bin")
            #expect(first.count == 1, "connections=1: one request, \(first.map { $0.range ?? "-" })")
            #expect(first.allSatisfy { $0.header("X-Token") == "abc def" })
            #expect(origin.requests(to: "/f1.bin").allSatisfy { $0.header("X-Token") == nil })
            #expect(origin.requests(to: "/f1.bin").allSatisfy { $0.header("Referer") == "http://example.test/page" })
            #expect(origin.requests(to: "/f2.bin").allSatisfy { $0.header("Referer") == nil })
            await origin.stop()
        }

        @Test("an unknown key or a bad value is a usage error naming the line, before anything is fetched")
        func badLines() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/x.bin", size: 1000).absoluteString
            let directory = TemporaryDirectory()
            for (text, says) in [
                ("\(url)\n  colour=blue\n", "line 2: unknown option 'colour'"),
                ("\(url)\n  connections=99\n", "line 2: connections= must be 1 to 32"),
                ("\(url) checksum=sha256=abc\n", "line 1:"),
                ("  out=a.bin\n\(url)\n", "line 1: an option line must follow a URL line"),
            ] {
                try text.write(to: directory.file("bad.txt"), atomically: true, encoding: .utf8)
                let result = try await ChildProcess.run(
                    "haul",
                    [
                        "get", "-q", "-d", directory.path, "-i", directory.file("bad.txt").path, "--state-dir",
                        directory.file("state").path,
                    ])
                #expect(result.status == 64, "\(text)")
                #expect(result.error.contains(says), "\(result.error)")
            }
            #expect(origin.requests.isEmpty)
            await origin.stop()
        }
    }
}
