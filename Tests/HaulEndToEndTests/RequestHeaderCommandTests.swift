import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    @Suite("haul's request headers")
    struct RequestHeaderCommandTests {
        @Test("--user-agent and --referer are sent on every request; a header with a line break is refused")
        func userAgentAndReferer() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let url = origin.serve("/agent.bin", size: 3 * 1024 * 1024)
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", url.absoluteString, "-o", directory.file("agent.bin").path, "-q", "-x", "2",
                    "-U", "Fetcher/2.0", "--referer", "https://example.com/page", "-H", "User-Agent: replaced",
                    "--state-dir", directory.file("state").path,
                ])
            #expect(result.status == 0, "\(result.error)")
            let requests = origin.requests(to: "/agent.bin")
            #expect(!requests.isEmpty)
            #expect(requests.allSatisfy { $0.header("User-Agent") == "Fetcher/2.0" })
            #expect(requests.allSatisfy { $0.header("Referer") == "https://example.com/page" })
            let bad = try await ChildProcess.run(
                "haul", ["get", url.absoluteString, "-U", "x\r\nInjected: 1", "--state-dir", directory.file("s").path])
            #expect(bad.status == 64, "\(bad.error)")
            await origin.stop()
        }
    }
}
