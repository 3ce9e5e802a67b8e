import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// The dashboard with 10,000 downloads in Chromium (`tools/browser/dashboard_scale.py`): first render, bytes per
    /// refresh, a flat heap (60 s here; `HAUL_DASHBOARD_SOAK_SECONDS=300` for the five minutes).
    @Suite(
        "the dashboard with 10,000 downloads in Chromium",
        .enabled(
            if: Browser.isAvailable,
            "chromium, chromium-driver or selenium (in .build/python-venv) is missing (.ci/run installs them)"))
    struct DashboardScaleTests {
        @Test("first render under a second, a refresh under 100 KB, the heap flat")
        func tenThousand() async throws {
            let origin = try await TestOrigin.start()
            origin.setFaults { $0.bytesPerSecond = 100_000 }
            let url = origin.serve("/big.bin", size: 64 << 20)
            let directory = TemporaryDirectory()
            let list = (1...10_000).map { "\(url.absoluteString) out=f\($0).bin" }.joined(separator: "\n") + "\n"
            try Data(list.utf8).write(to: directory.file("urls.txt"))
            let added = try await ChildProcess.run(
                "haul",
                [
                    "add", "-x", "1", "-d", directory.file("downloads").path, "-i", directory.file("urls.txt").path,
                    "--state-dir", directory.file("state").path,
                ], timeout: .seconds(300))
            #expect(added.status == 0, "\(added.error)")
            let (daemon, port) = try await Browser.serve(directory, ["-j", "1"])
            try await Browser.check(
                "dashboard_scale.py", ["http://127.0.0.1:\(port)", EndToEnd.Aria2pTests.secret, "10000"],
                daemon: daemon, timeout: .seconds(900))
            daemon.send(SIGTERM)
            _ = try await daemon.wait(timeout: .seconds(30))
            await origin.stop()
        }
    }
}
