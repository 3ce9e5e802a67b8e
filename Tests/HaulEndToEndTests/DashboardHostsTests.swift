import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// The dashboard's hosts panel in Chromium (`tools/browser/dashboard_hosts.py`) against a real daemon: one origin
    /// that serves (named `localhost`), one that answers 429 with `Retry-After: 30` above a request a second.
    @Suite(
        "the dashboard's hosts panel in Chromium",
        .enabled(
            if: Browser.isAvailable,
            "chromium, chromium-driver or selenium (in .build/python-venv) is missing (.ci/run installs them)"))
    struct DashboardHostsTests {
        @Test(
            "empty at first; a host answering 429 shows throttled, first, with reason, time and hold; read ≤ every 2 s")
        func hostsPanel() async throws {
            let open = try await TestOrigin.start()
            let throttled = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let (daemon, port) = try await Browser.serve(directory)
            throttled.requestLimit.limit(1, refusal: .tooManyRequests(retryAfter: 30))
            let openURL = open.serve("/open.bin", size: 20_000).absoluteString
                .replacingOccurrences(of: "127.0.0.1", with: "localhost")
            let limited = (0..<3).map { throttled.serve("/limited-\($0).bin", size: 20_000).absoluteString }
            try await Browser.check(
                "dashboard_hosts.py",
                ["http://127.0.0.1:\(port)", EndToEnd.Aria2pTests.secret, openURL] + limited, daemon: daemon)
            #expect(throttled.requestLimit.counts.refused >= 1, "the origin refused a request with 429")
            daemon.send(SIGTERM)
            _ = try await daemon.wait(timeout: .seconds(30))
            await open.stop()
            await throttled.stop()
        }
    }
}
