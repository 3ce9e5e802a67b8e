import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// The schedules applied to a manager at their boundaries, with time driven by a mock clock.
@Suite("Schedule runner")
struct ScheduleRunnerTests {
    /// A runner whose wall clock starts at `start` (Berlin time) and follows `clock`.
    static func runner(
        start: String, clock: MockClock, rates: String? = nil, pauses: String? = nil
    ) throws -> ScheduleRunner {
        let origin = DownloadScheduleTests.date(start)
        var runner = ScheduleRunner(
            rates: try rates.map { try DownloadScheduleTests.rates($0) },
            pauses: try pauses.map { text in
                try DownloadSchedule<Bool>(parsing: text, option: "--pause-schedule", fallback: false, bare: true) {
                    $0 == "run" ? false : nil
                }
            })
        runner.calendar = DownloadScheduleTests.calendar
        runner.clock = clock
        runner.now = { origin.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        return runner
    }

    @Test("a boundary crossed changes the global limit; a change made meanwhile holds until the boundary")
    func limitAtBoundary() async throws {
        let clock = MockClock()
        let harness = try await Harness.make()
        let runner = try Self.runner(start: "2026-11-27 17:59", clock: clock, rates: "Mon-Fri 08:00-18:00=2M, *=0")
        let running = Task { await runner.run(on: harness.manager) }
        try await clock.waitForSleepers()
        #expect(await harness.manager.globalSpeedLimit == 2 << 20)
        #expect(runner.status?.nextChange == DownloadScheduleTests.date("2026-11-27 18:00"))

        // aria2.changeGlobalOption does this: it holds until the next boundary.
        try await harness.manager.setGlobalSpeedLimit(500 * 1024)
        clock.advance(by: .seconds(30))
        #expect(await harness.manager.globalSpeedLimit == 500 * 1024)

        clock.advance(by: .seconds(30))
        try await clock.waitForSleepers()
        try await waitUntil { await harness.manager.globalSpeedLimit == nil }
        #expect(runner.status?.limit == nil)
        #expect(runner.status?.nextChange == DownloadScheduleTests.date("2026-11-30 08:00"))
        running.cancel()
        await harness.shutdown()
    }

    @Test("a pause window holds every download: the running one goes back to the queue, new ones wait; then all run")
    func pauseWindow() async throws {
        let clock = MockClock()
        let harness = try await Harness.make()
        harness.origin.setFaults { $0.bytesPerSecond = 256 * 1024 }
        let first = try await harness.manager.add(harness.origin.serve("/held.bin", size: 400_000))
        try await waitUntil { await harness.manager.snapshot(first)?.receivedBytes ?? 0 > 0 }

        let runner = try Self.runner(start: "2026-11-27 08:59", clock: clock, pauses: "Fri 09:00-10:00")
        let running = Task { await runner.run(on: harness.manager) }
        try await clock.waitForSleepers()
        #expect(await harness.manager.isHoldingDownloads == false)

        clock.advance(by: .seconds(60))
        try await waitUntil { await harness.manager.isHoldingDownloads }
        try await waitUntil { await harness.manager.state(of: first) == .queued }
        let second = try await harness.manager.add(harness.origin.serve("/later.bin", size: 100_000))
        try await Task.sleep(for: .milliseconds(300))
        #expect(await harness.manager.state(of: second) == .queued, "nothing starts in the window")
        #expect(runner.status?.held == true)

        // 10:00: the window ends, and both run to the end.
        try await clock.waitForSleepers()
        clock.advance(by: .seconds(3600))
        await harness.manager.waitUntilEnded([first, second])
        #expect(await harness.manager.states(of: [first, second]) == [.completed, .completed])
        #expect(await harness.manager.isHoldingDownloads == false)
        for snapshot in await harness.manager.snapshots(of: [first, second]) {
            expectContent(try #require(snapshot.file), size: Int(try #require(snapshot.totalBytes)))
        }
        running.cancel()
        await harness.shutdown()
    }
}
