import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// A host that refuses every connection fails its downloads together, and is used again once it answers.
@Suite("Host gate")
struct HostGateTests {
    /// A manager that runs two downloads at a time, gives each 1 s without progress (and attempts enough that the
    /// time is the bound that ends it), and probes a host that is down at most every `probeInterval`.
    private func harness(probeInterval: Duration, running: Int = 2) async throws -> Harness {
        try await Harness.make {
            $0.maxConcurrentDownloads = running
            $0.retry.maxTimeWithoutProgress = .seconds(1)
            $0.retry.maxAttempts = 1000
            $0.retry.maxDelay = probeInterval
        }
    }

    /// A port nobody listens on (an origin's, just stopped), and its origin's URL for `path`.
    private func closedPort() async throws -> Int {
        let closed = try await TestOrigin.start()
        await closed.stop()
        return closed.port
    }

    private func error(_ manager: DownloadManager, _ id: DownloadID) async -> DownloadError? {
        do {
            _ = try await manager.wait(for: id)
            return nil
        } catch {
            return error
        }
    }

    @Test("once a host has refused every connection for the time allowed, its queued downloads fail at once")
    func queuedDownloadsFailTogether() async throws {
        let harness = try await harness(probeInterval: .seconds(5))
        let port = try await closedPort()
        var ids: [DownloadID] = []
        for index in 0..<12 {
            ids.append(try await harness.manager.add(URL(string: "http://127.0.0.1:\(port)/f\(index).bin")!))
        }
        var errors: [DownloadError] = []
        for id in ids { errors.append(try #require(await error(harness.manager, id))) }
        // The first tries for its own second (the host cannot have been down longer); the others find the host down
        // for that long, at once or while they retry (one of them probes, fails, and is refused on its next try).
        #expect(errors[0].code == .networkFailure)
        let together = errors.filter { $0.code == .hostUnreachable }
        #expect(together.count >= 8, "\(errors.map(\.summary))")
        #expect(together.allSatisfy { $0.summary.contains("could not connect to 127.0.0.1:\(port) for 1 s") })
        #expect(together.allSatisfy { $0.summary.contains("connection refused") && !$0.isTransient })
        #expect(errors.allSatisfy { $0.code == .networkFailure || $0.code == .hostUnreachable })
        await harness.shutdown()
    }

    @Test("after the probe interval a request tries the host again; its answer ends the outage")
    func hostThatComesBackIsUsed() async throws {
        let harness = try await harness(probeInterval: .milliseconds(300), running: 1)
        let port = try await closedPort()
        let first = try await harness.manager.add(URL(string: "http://127.0.0.1:\(port)/a.bin")!)
        #expect(await error(harness.manager, first)?.code == .networkFailure)
        // Down for a second now: this one is the probe, fails, and is refused on its next try.
        let second = try await harness.manager.add(URL(string: "http://127.0.0.1:\(port)/b.bin")!)
        #expect(await error(harness.manager, second)?.code == .hostUnreachable)

        let origin = try await TestOrigin.start(port: port)
        let url = origin.url("/back.bin")
        origin.serve("/back.bin", size: 5000)
        origin.serve("/after.bin", size: 7000)
        // Refused at once while the probe interval runs (no request reaches the origin)...
        let refused = try await harness.manager.add(url)
        #expect(await error(harness.manager, refused)?.code == .hostUnreachable)
        #expect(origin.requests(to: "/back.bin").isEmpty)
        // ...then the next request is the probe, the host answers, and the outage is over for every download.
        try await Task.sleep(for: .milliseconds(400))
        expectContent(try await harness.manager.wait(for: try await harness.manager.add(url)), size: 5000)
        expectContent(
            try await harness.manager.wait(for: try await harness.manager.add(origin.url("/after.bin"))), size: 7000)
        await harness.shutdown()
        await origin.stop()
    }
}
