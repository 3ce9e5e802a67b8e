import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    @Suite("haul's per-host speed limit")
    struct HostLimitCommandTests {
        @Test("--limit-rate-host caps every download from the host together; a malformed pair is a usage error")
        func limitRateHost() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let urls = (0..<2).map { origin.serve("/h\($0).bin", size: 1_000_000).absoluteString }
            let started = ContinuousClock.now
            let result = try await ChildProcess.run(
                "haul",
                ["get", "-q", "-j", "2", "-d", directory.path, "--limit-rate-host", "127.0.0.1=1M"] + urls
                    + ["--state-dir", directory.file("state").path])
            #expect(result.status == 0, "\(result.error)")
            // 2 MB at 1 MiB/s with a quarter-second burst: at least 1.6 s (a lower bound cannot flake).
            #expect(started.duration(to: .now) >= .seconds(1.5))
            for name in ["h0.bin", "h1.bin"] {
                let data = try Data(contentsOf: directory.file(name))
                #expect(TestContent.firstMismatch([UInt8](data), size: 1_000_000) == nil)
            }
            for bad in ["127.0.0.1", "=1M", "127.0.0.1=fast", "127.0.0.1=0"] {
                let refused = try await ChildProcess.run(
                    "haul", ["get", urls[0], "--limit-rate-host", bad, "--state-dir", directory.file("s").path])
                #expect(refused.status == 64, "\(bad): \(refused.error)")
            }
            await origin.stop()
        }
    }
}
