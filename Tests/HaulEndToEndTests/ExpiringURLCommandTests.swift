import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    @Suite("haul and expiring URLs")
    struct ExpiringURLCommandTests {
        @Test("--url-command gives a fresh signed URL when the first expires mid-download; the bytes on disk are kept")
        func urlCommand() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let size = 4 * 1024 * 1024 + 3
            var resource = TestOrigin.Resource(size: size)
            resource.validTokens = ["first"]
            origin.serve("/signed.bin", resource)
            // Every response stops at 3 MiB and closes a second later (as the drop below does), retries too, until
            // the token expires: a test that wakes late still expires it mid-download, never after the last byte.
            origin.setFaults {
                $0.bytesPerSecond = 2 * 1024 * 1024
                $0.stallAtByte = 3 * 1024 * 1024
                $0.stallDuration = .seconds(1)
            }
            let added = origin.url("/signed.bin").absoluteString + "?token=first"
            let fresh = origin.url("/signed.bin").absoluteString + "?token=second"
            let calls = directory.file("calls.txt")
            let command = "echo \"$HAUL_STATUS $HAUL_URL\" >> '\(calls.path)'; echo '\(fresh)'"
            let child = try ChildProcess(
                product: "haul",
                arguments: [
                    "get", "-q", "-x", "2", added, "-o", directory.file("file.bin").path, "--url-command", command,
                    "--state-dir", directory.file("state").path,
                ])
            // Expire the first token once a megabyte is in, and drop the responses under way.
            let deadline = ContinuousClock.now + .seconds(30)
            while origin.bodyBytesSent(to: "/signed.bin") < 1024 * 1024, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            origin.updateResource("/signed.bin") { $0.validTokens = ["second"] }
            origin.setFaults {
                $0.bytesPerSecond = nil
                $0.stallAtByte = nil
            }
            origin.dropOpenResponses()
            let status = try await child.wait(timeout: .seconds(60))
            #expect(status == 0, "\(child.standardError)")
            let data = try Data(contentsOf: directory.file("file.bin"))
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            let lines = try String(contentsOf: calls, encoding: .utf8).split(separator: "\n")
            #expect(lines == ["403 \(added)"])
            // Continued from the bytes on disk: never a whole new copy (what the dropped connections had in flight is
            // fetched again, nothing more), and every request with the fresh token is a range with the validator.
            let requests = origin.requests(to: "/signed.bin")
            #expect(requests.filter { $0.status == 200 }.isEmpty)
            #expect(requests.filter { $0.target.hasSuffix("token=second") }.allSatisfy { $0.ifRange != nil })
            #expect(origin.bodyBytesSent(to: "/signed.bin") < 2 * size)

            // A command that fails leaves the refusal as the error.
            origin.updateResource("/signed.bin") { $0.validTokens = [] }
            let failed = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", added, "-o", directory.file("other.bin").path, "--url-command", "exit 3",
                    "--state-dir", directory.file("state2").path,
                ])
            #expect(failed.status == 8, "the refusal (403) is an HTTP error")
            #expect(failed.error.contains("403") && failed.error.contains("status 3"), "\(failed.error)")
            await origin.stop()
        }
    }
}
