import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// The periodic work runs on the configured tick clock: tests drive it instead of sleeping and polling.
@Suite("Tick clock")
struct TickClockTests {
    @Test("the look at other processes' changes happens when the tick clock says, not before")
    func watcherFollowsTheClock() async throws {
        let clock = MockClock()
        let runner = try await Harness.make { $0.tickClock = clock }
        var configuration = Harness.configuration(runner.directory)
        configuration.runsDownloads = false
        let editor = try await DownloadManager(configuration: configuration)
        let url = runner.origin.serve("/ticked.bin", size: 100_000)

        let id = try await editor.add(url)
        // The runner's watcher sleeps on the mock clock: until it moves, the runner has not seen the new download.
        try await clock.waitForSleepers()
        #expect(await runner.manager.snapshot(id) == nil)
        clock.advance(by: configuration.externalChangeInterval)
        let file = try await withDeadline(.seconds(20), "the runner picks up the download") {
            try await runner.manager.wait(for: id)
        }
        expectContent(file, size: 100_000)
        await editor.shutdown()
        await runner.shutdown()
    }

    @Test("a speed limit paces the body on the tick clock")
    func limiterFollowsTheClock() async throws {
        let clock = MockClock()
        let limiter = RateLimiter(bytesPerSecond: 1_000, clock: clock)
        let burst = limiter.delay(for: 16 * 1024)
        #expect(burst == .zero, "the first 16 KiB pass as a burst")
        let wait = limiter.delay(for: 1_000)
        #expect(wait == .seconds(1), "time stands still on the mock clock: exactly one second of debt")
        clock.advance(by: .seconds(60))
        #expect(limiter.delay(for: 250) == .zero, "a minute on the clock refilled the bucket")
    }
}
