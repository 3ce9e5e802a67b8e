import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// A host that refuses every connection fails its downloads together, and is used again once it answers. Time is a
/// mock clock's (the retry waits and the gate's), moved on only while a download waits: the outcome does not depend
/// on how loaded the machine is.
@Suite("Host gate")
struct HostGateTests {
    /// A manager that runs `running` downloads at a time, retries each every 1 s for 10 s without progress (attempts
    /// enough that the time is the bound that ends it), and probes a host that is down at most every 5 s.
    private func harness(_ clock: MockClock, running: Int) async throws -> Harness {
        try await Harness.make {
            $0.clock = clock
            $0.maxConcurrentDownloads = running
            $0.retry.maxTimeWithoutProgress = .seconds(10)
            $0.retry.maxAttempts = 1000
            $0.retry.initialDelay = .seconds(1)
            $0.retry.multiplier = 1
            $0.retry.jitter = 0
            $0.retry.maxDelay = .seconds(5)
        }
    }

    /// Wakes the next sleeper on `clock` whenever one waits, until cancelled.
    private func drive(_ clock: MockClock) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                if let next = clock.pendingDelays.first { clock.advance(by: next) }
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    /// A port nobody listens on (an origin's, just stopped).
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
        let clock = MockClock()
        let harness = try await harness(clock, running: 2)
        let port = try await closedPort()
        let driver = drive(clock)
        var ids: [DownloadID] = []
        for index in 0..<12 {
            ids.append(try await harness.manager.add(URL(string: "http://127.0.0.1:\(port)/f\(index).bin")!))
        }
        var errors: [DownloadError] = []
        for id in ids { errors.append(try #require(await error(harness.manager, id))) }
        driver.cancel()
        // Only the first two can try for their own 10 s (the host cannot have been down longer before they end); the
        // others find it down for that long, at once or at their next try (one of them probes, fails, and is refused
        // on its next try). At 10 s exactly, the first two may be refused too.
        let alone = errors.filter { $0.code == .networkFailure }
        #expect(alone.count <= 2 && alone.allSatisfy { $0.summary.contains("no new data for 10 s") })
        let together = errors.filter { $0.code == .hostUnreachable }
        #expect(together.count >= 10 && alone.count + together.count == 12, "\(errors.map(\.summary))")
        #expect(together.allSatisfy { $0.summary.contains("could not connect to 127.0.0.1:\(port) for 1") })
        #expect(together.allSatisfy { $0.summary.contains("connection refused") && !$0.isTransient })
        await harness.shutdown()
    }

    @Test("after the probe interval a request tries the host again; its answer ends the outage")
    func hostThatComesBackIsUsed() async throws {
        let clock = MockClock()
        let harness = try await harness(clock, running: 1)
        let port = try await closedPort()
        let driver = drive(clock)
        let first = try await harness.manager.add(URL(string: "http://127.0.0.1:\(port)/a.bin")!)
        #expect(await error(harness.manager, first)?.code == .networkFailure)
        // Down for 10 s now: this one is the probe, fails, and is refused on its next try.
        let second = try await harness.manager.add(URL(string: "http://127.0.0.1:\(port)/b.bin")!)
        #expect(await error(harness.manager, second)?.code == .hostUnreachable)
        driver.cancel()

        let origin = try await TestOrigin.start(port: port)
        let url = origin.url("/back.bin")
        origin.serve("/back.bin", size: 5000)
        origin.serve("/after.bin", size: 7000)
        // Refused at once while the probe interval runs (no request reaches the origin)...
        let refused = try await harness.manager.add(url)
        #expect(await error(harness.manager, refused)?.code == .hostUnreachable)
        #expect(origin.requests(to: "/back.bin").isEmpty)
        // ...then the next request is the probe, the host answers, and the outage is over for every download.
        clock.advance(by: .seconds(5))
        expectContent(try await harness.manager.wait(for: try await harness.manager.add(url)), size: 5000)
        expectContent(
            try await harness.manager.wait(for: try await harness.manager.add(origin.url("/after.bin"))), size: 7000)
        await harness.shutdown()
        await origin.stop()
    }
}
