import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// The socket cut in Chromium (`tools/browser/dashboard_reconnect.py`): the daemon stopped and started again, the
    /// page back by itself within 15 s, without a reload.
    @Suite(
        "the dashboard across a daemon restart in Chromium",
        .enabled(
            if: Browser.isAvailable,
            "chromium, chromium-driver or selenium (in .build/python-venv) is missing (.ci/run installs them)"))
    struct DashboardReconnectTests {
        @Test("the daemon stops and starts again: the page recovers by itself within 15 s, no reload")
        func socketCut() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let (daemon, port) = try await Browser.serve(directory)
            let base = "http://127.0.0.1:\(port)"
            _ = try await DashboardTests.add(base, origin.serve("/before.bin", size: 10_000).absoluteString)
            let restart = [try ChildProcess.locate("haul").path] + Browser.serveArguments(directory, port: port)
            try await Browser.check(
                "dashboard_reconnect.py",
                [
                    base, EndToEnd.Aria2pTests.secret, String(daemon.pid),
                    origin.serve("/after.bin", size: 10_000).absoluteString,
                ] + restart)
            _ = try await daemon.wait(timeout: .seconds(30))
            await origin.stop()
        }
    }
}
