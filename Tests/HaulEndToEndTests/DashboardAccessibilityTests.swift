import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// An axe-core scan of the dashboard in Chromium (`tools/browser/dashboard_axe.py`), keyboard reach and names.
    @Suite(
        "the dashboard's accessibility in Chromium",
        .enabled(
            if: Browser.hasAxe,
            "chromium, chromium-driver, selenium or axe-selenium-python (in .build/python-venv) is missing"))
    struct DashboardAccessibilityTests {
        @Test("axe finds no serious or critical violation, light and dark, wide and 360 px; every control by Tab")
        func scan() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let (daemon, port) = try await Browser.serve(directory)
            let base = "http://127.0.0.1:\(port)"
            let done = try await DashboardTests.add(base, origin.serve("/report.pdf", size: 200_000).absoluteString)
            try await DashboardTests.waitForStatus(base, done, "complete")
            let failed = try await DashboardTests.add(base, origin.url("/missing.iso").absoluteString)
            try await DashboardTests.waitForStatus(base, failed, "error")
            origin.setFaults { $0.bytesPerSecond = 200_000 }
            let running = try await DashboardTests.add(
                base, origin.serve("/video.mkv", size: 50_000_000).absoluteString)
            try await DashboardTests.waitForStatus(base, running, "active")
            try await Browser.check("dashboard_axe.py", [base, EndToEnd.Aria2pTests.secret, done], daemon: daemon)
            daemon.send(SIGTERM)
            _ = try await daemon.wait(timeout: .seconds(30))
            await origin.stop()
        }
    }
}
