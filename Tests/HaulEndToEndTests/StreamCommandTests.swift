import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// `haul get URL -o -`: the file on standard output, everything else on standard error.
    @Suite("haul get -o -")
    struct StreamCommandTests {
        @Test("the file goes to standard output byte for byte, across a cut; the status line goes to standard error")
        func streamsToStandardOutput() async throws {
            let origin = try await TestOrigin.start()
            let size = 3 * 1024 * 1024 + 11
            let url = origin.serve("/s.bin", size: size)
            origin.setFaults {
                $0.cutAfter = 1_000_000
                $0.cutTimes = 1
            }
            let directory = TemporaryDirectory()
            let child = try ChildProcess(
                product: "haul",
                arguments: ["get", url.absoluteString, "-o", "-", "--state-dir", directory.file("state").path])
            #expect(try await child.wait() == 0, "\(child.standardError)")
            #expect(TestContent.firstMismatch([UInt8](child.standardOutputData), size: size) == nil)
            #expect(child.standardError.contains("to standard output"), "\(child.standardError)")
            #expect(origin.requests(to: "/s.bin").last?.range == "bytes=\(1_000_000 - 64 * 1024)-")
            #expect(!FileManager.default.fileExists(atPath: "-"), "no file named '-'")
            await origin.stop()
        }

        @Test(
            "a reader that goes away ends haul as SIGPIPE does; a wrong checksum exits 3; --json and haul add are refused"
        )
        func pipesAndErrors() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/p.bin", size: 8 * 1024 * 1024)
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path]
            let haul = try ChildProcess.locate("haul").path
            let script =
                "'\(haul)' get -q -o - \(url.absoluteString) \(state.joined(separator: " ")) | head -c 1000 "
                + ">/dev/null; echo ${PIPESTATUS[0]}"
            let pipeline = try ChildProcess(executable: URL(fileURLWithPath: "/bin/bash"), arguments: ["-c", script])
            #expect(try await pipeline.wait() == 0)
            #expect(pipeline.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "141")
            #expect(pipeline.standardError.isEmpty, "\(pipeline.standardError)")

            let sum = "sha256=" + String(repeating: "0", count: 64)
            let wrong = try await ChildProcess.run(
                "haul", ["get", "-q", "-o", "-", "--checksum", sum, url.absoluteString] + state)
            #expect(wrong.status == 3, "\(wrong.error)")
            #expect(wrong.error.contains("discard them"), "\(wrong.error)")
            let json = try await ChildProcess.run("haul", ["get", "--json", "-o", "-", url.absoluteString] + state)
            #expect(json.status == 64 && json.error.contains("standard output"), "\(json.error)")
            let queued = try await ChildProcess.run("haul", ["add", "-o", "-", url.absoluteString] + state)
            #expect(queued.status == 64 && queued.error.contains("only 'haul get'"), "\(queued.error)")
            await origin.stop()
        }
    }
}
