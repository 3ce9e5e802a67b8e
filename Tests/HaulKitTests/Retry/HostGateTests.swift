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

    /// Wakes the next sleeper on `clock` whenever one waits, looking every `step` of real time, until cancelled.
    private func drive(_ clock: MockClock, every step: Duration = .milliseconds(2)) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                if let next = clock.pendingDelays.first { clock.advance(by: next) }
                try? await Task.sleep(for: step)
            }
        }
    }

    /// A port nobody listens on (an origin's, just stopped).
    private func closedPort() async throws -> Int {
        let closed = try await TestOrigin.start()
        await closed.stop()
        return closed.port
    }

    /// Adds a download of each URL, all at once, and returns how each failed, in that order.
    private func failures(_ manager: DownloadManager, _ urls: [URL]) async throws -> [DownloadError] {
        var ids: [DownloadID] = []
        for url in urls { ids.append(try await manager.add(url)) }
        var errors: [DownloadError] = []
        for id in ids { errors.append(try #require(await error(manager, id))) }
        return errors
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
        let errors = try await failures(
            harness.manager, (0..<12).map { URL(string: "http://127.0.0.1:\(port)/f\($0).bin")! })
        driver.cancel()
        // Only the first two can try for their own 10 s (the host cannot have been down longer before they end); the
        // others find it down for that long, at once or at their next try (one of them probes, fails, and is refused
        // on its next try). At 10 s exactly, the first two may be refused too.
        let alone = errors.filter { $0.code == .networkFailure }
        #expect(alone.count <= 2 && alone.allSatisfy { $0.summary.contains("no new data for 10 s") })
        let together = errors.filter { $0.code == .hostDown }
        #expect(together.count >= 10 && alone.count + together.count == 12, "\(errors.map(\.summary))")
        #expect(together.allSatisfy { $0.summary.contains("every request to 127.0.0.1:\(port) failed for 1") })
        #expect(together.allSatisfy { $0.summary.contains("connection refused") && !$0.isTransient })
        #expect(together.allSatisfy { $0.httpStatus == nil })
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
        #expect(await error(harness.manager, second)?.code == .hostDown)
        driver.cancel()

        let origin = try await TestOrigin.start(port: port)
        let url = origin.url("/back.bin")
        origin.serve("/back.bin", size: 5000)
        origin.serve("/after.bin", size: 7000)
        // Refused at once while the probe interval runs (no request reaches the origin)...
        let refused = try await harness.manager.add(url)
        #expect(await error(harness.manager, refused)?.code == .hostDown)
        #expect(origin.requests(to: "/back.bin").isEmpty)
        // ...then the next request is the probe, the host answers, and the outage is over for every download.
        clock.advance(by: .seconds(5))
        expectContent(try await harness.manager.wait(for: try await harness.manager.add(url)), size: 5000)
        expectContent(
            try await harness.manager.wait(for: try await harness.manager.add(origin.url("/after.bin"))), size: 7000)
        await harness.shutdown()
        await origin.stop()
    }

    @Test("a host that answers 503 to every request is down too (a CDN in front of a dead origin)")
    func errorStatusesCount() async throws {
        let clock = MockClock()
        let harness = try await harness(clock, running: 2)
        for index in 0..<8 { harness.origin.respond("/down\(index).bin", status: 503) }
        let driver = drive(clock)
        let errors = try await failures(harness.manager, (0..<8).map { harness.origin.url("/down\($0).bin") })
        driver.cancel()
        let together = errors.filter { $0.code == .hostDown }
        #expect(together.count >= 6, "\(errors.map(\.summary))")
        #expect(together.allSatisfy { $0.summary.contains("the last with 503") && $0.httpStatus == 503 })
        // Only the probes reach the origin once the host is down: far fewer requests than 8 downloads x 10 tries.
        #expect((0..<8).map { harness.origin.requests(to: "/down\($0).bin").count }.reduce(0, +) < 30)
        await harness.shutdown()
    }

    @Test("bytes arriving from a host keep it up while its other requests fail (a limit on connections)")
    func progressKeepsHostUp() async throws {
        let clock = MockClock()
        let harness = try await harness(clock, running: 3)
        // 100 s at the throttled rate: it still runs when the others end, however slow the machine.
        let size = 20_000_000
        let big = harness.origin.serve("/big.bin", size: size)
        for index in 0..<3 { harness.origin.respond("/busy\(index).bin", status: 503) }
        harness.origin.setFaults { $0.bytesPerSecond = 200_000 }
        let stream = try await harness.manager.add(big)
        try await harness.waitForProgress(stream, atLeast: 50_000)
        // A tenth of a second of real time per retry: the stream's monitor (every 50 ms) credits the host between.
        let driver = drive(clock, every: .milliseconds(100))
        let errors = try await failures(harness.manager, (0..<3).map { harness.origin.url("/busy\($0).bin") })
        driver.cancel()
        // Each tried for its own 10 s; none was failed at once for the host.
        #expect(
            errors.allSatisfy { $0.code == .serverError && $0.summary.contains("no new data for 10 s") },
            "\(errors.map(\.summary))")
        #expect(await harness.manager.snapshot(stream)?.state == .running, "the stream ended too early to tell")
        try await harness.manager.pause(stream)  // its bytes are not the point here
        await harness.shutdown()
    }
}
