import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// The dashboard's queue work in Chromium (`tools/browser/dashboard_queue.py`): focus across refreshes, the
    /// details of a mirrored and verified download, retry, reorder, bulk pause and search.
    @Suite(
        "the dashboard's queue work in Chromium",
        .enabled(
            if: Browser.isAvailable,
            "chromium, chromium-driver or selenium (in .build/python-venv) is missing (.ci/run installs them)"))
    struct DashboardQueueTests {
        @Test(
            "focus kept across ten refreshes; details of a mirrored, verified download; retry; reorder; bulk pause; search"
        )
        func queueWork() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let (daemon, port) = try await Browser.serve(directory, ["-j", "8"])
            let base = "http://127.0.0.1:\(port)"
            let secret = EndToEnd.Aria2pTests.secret
            func rpc(_ method: String, _ params: String) async throws -> String {
                let answer = try await DashboardTests.post(
                    base, #"{"jsonrpc":"2.0","id":"q","method":"\#(method)","params":["token:\#(secret)",\#(params)]}"#)
                guard let range = answer.range(of: #""result":""#) else {
                    Issue.record("\(method) failed: \(answer)")
                    throw CancellationError()
                }
                return String(answer[range.upperBound...].prefix(16))
            }

            // A download from two sources with a checksum, finished.
            let size = 3_000_000
            let own = origin.serve("/mirrored.bin", size: size)
            let mirror = origin.serve("/copy-of-it.bin", size: size)
            let sha256 = TestContent.sha256(size: size)
            let mirrored = try await rpc(
                "aria2.addUri",
                #"["\#(own.absoluteString)","\#(mirror.absoluteString)"],{"split":"4","checksum":"sha-256=\#(sha256)"}"#
            )
            try await DashboardTests.waitForStatus(base, mirrored, "complete")
            // A download that fails (nothing is served there yet), then would succeed.
            let late = origin.url("/late.bin")
            let failed = try await rpc("aria2.addUri", #"["\#(late.absoluteString)"]"#)
            try await DashboardTests.waitForStatus(base, failed, "error")
            _ = origin.serve("/late.bin", size: 50_000)
            // Slow from now on: downloads that keep running, three waiting, three to pause together.
            origin.setFaults { $0.bytesPerSecond = 200_000 }
            let running = try await rpc(
                "aria2.addUri", #"["\#(origin.serve("/running.bin", size: 60_000_000).absoluteString)"]"#)
            try await DashboardTests.waitForStatus(base, running, "active")
            var waiting: [String] = []
            for index in 1...3 {
                let url = origin.serve("/wait-\(index).bin", size: 1_000_000)
                waiting.append(try await rpc("aria2.addUri", #"["\#(url.absoluteString)"],{"pause":"true"}"#))
            }
            var bulk: [String] = []
            for index in 1...3 {
                let url = origin.serve("/together-\(index).bin", size: 60_000_000)
                bulk.append(try await rpc("aria2.addUri", #"["\#(url.absoluteString)"]"#))
            }
            let scenario: [String: Any] = [
                "running": running, "mirrored": mirrored, "mirror": mirror.absoluteString, "sha256": sha256,
                "failed": failed, "failedURL": late.absoluteString, "waiting": waiting, "bulk": bulk,
            ]
            let json = String(decoding: try JSONSerialization.data(withJSONObject: scenario), as: UTF8.self)
            try await Browser.check("dashboard_queue.py", [base, secret, json], daemon: daemon)
            daemon.send(SIGTERM)
            _ = try await daemon.wait(timeout: .seconds(30))
            await origin.stop()
        }
    }
}
