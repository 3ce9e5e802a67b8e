import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    @Suite("haul get --spider")
    struct SpiderCommandTests {
        @Test("--spider reports each URL and downloads nothing; a missing one exits 1; --json gives one object each")
        func spider() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let present = origin.serve("/here.bin", size: 2_000_000).absoluteString
            let missing = origin.url("/gone.bin").absoluteString
            let ok = try await ChildProcess.run(
                "haul", ["get", "--spider", present, "-d", directory.path, "--state-dir", directory.file("state").path])
            #expect(ok.status == 0, "\(ok.error)")
            #expect(ok.output.contains("resumable (ranges)") && ok.output.contains("here.bin"), "\(ok.output)")
            let both = try await ChildProcess.run(
                "haul",
                [
                    "get", "--spider", "--json", present, missing, "-d", directory.path,
                    "--state-dir", directory.file("state").path,
                ])
            #expect(both.status == 8, "a 404 is an HTTP error")
            let objects = both.output.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(objects.count == 2)
            #expect(objects.first?["size"] as? Int == 2_000_000)
            #expect(objects.first?["acceptsRanges"] as? Bool == true)
            #expect((objects.last?["error"] as? String)?.contains("404") == true)
            #expect(origin.bodyBytesSent(to: "/here.bin") <= 2)  // one byte per run, never the file
            let entries = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(entries.allSatisfy { $0 == "state" }, "\(entries)")
            let list = try await ChildProcess.run(
                "haul", ["list", "--json", "--state-dir", directory.file("state").path])
            #expect(!list.output.contains("here.bin"), "\(list.output)")
            await origin.stop()
        }
    }
}
