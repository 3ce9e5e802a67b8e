import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

@Suite("Stall watchdog")
struct StallWatchdogTests {
    /// A watchdog that ticks only when told, and a watched operation that waits (300 s) until it is cancelled; returns
    /// the operation's task and its `Watch`, once it is registered.
    private func watchedWait(
        _ watchdog: StallWatchdog
    ) async throws -> (task: Task<Void, any Error>, watch: StallWatchdog.Watch) {
        let handle = Mutex<StallWatchdog.Watch?>(nil)
        let task = Task {
            try await watchdog.watch { watch in
                handle.withLock { $0 = watch }
                try await Task.sleep(for: .seconds(300))
            }
        }
        let start = ContinuousClock.now
        while handle.withLock({ $0 }) == nil {
            guard start.duration(to: .now) < .seconds(60) else { throw HarnessTimeout(what: "the watch to start") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return (task, try #require(handle.withLock { $0 }))
    }

    /// Ticks `count` times; returns how many bodies were cancelled in all.
    private func tick(_ watchdog: StallWatchdog, _ count: Int) -> Int {
        (0..<count).reduce(0) { fired, _ in fired + watchdog.tickOnce().fired }
    }

    @Test("a body waited for through five ticks (the timeout, at most a quarter more) is cancelled, never sooner")
    func firesOnTheFifthTick() async throws {
        let watchdog = StallWatchdog(timeout: .seconds(30), ticksByItself: false)
        let (task, _) = try await watchedWait(watchdog)
        #expect(tick(watchdog, 4) == 0)
        #expect(tick(watchdog, 1) == 1)
        let error = await #expect(throws: DownloadError.self) { try await task.value }
        #expect(error?.code == .stalled)
        #expect(error?.summary.contains("30 s") == true, "\(String(describing: error))")
        #expect(watchdog.watchedCount == 0)
    }

    @Test("each part that arrives starts the count again, and time spent busy with a part does not count")
    func partsAndBusyTime() async throws {
        let watchdog = StallWatchdog(timeout: .seconds(30), ticksByItself: false)
        let (task, watch) = try await watchedWait(watchdog)
        #expect(tick(watchdog, 4) == 0)
        watch.waiting()  // a part came
        #expect(tick(watchdog, 4) == 0)
        watch.busy()  // writing it, or held back by a speed limit
        #expect(tick(watchdog, 20) == 0)
        watch.waiting()
        #expect(tick(watchdog, 4) == 0)
        #expect(tick(watchdog, 1) == 1)
        await #expect(throws: DownloadError.self) { try await task.value }
    }

    @Test("on its own it ticks, and ends a stalled body after the timeout, not before")
    func firesAfterTimeout() async throws {
        let watchdog = StallWatchdog(timeout: .milliseconds(400))
        let start = ContinuousClock.now
        let error = await #expect(throws: DownloadError.self) {
            try await watchdog.watch { _ in try await Task.sleep(for: .seconds(300)) }
        }
        #expect(error?.code == .stalled)
        #expect(start.duration(to: .now) >= .milliseconds(400), "fired early")
    }

    @Test("a cancelled caller gets a cancellation, not a stall, and an operation's own error passes unchanged")
    func otherEndings() async throws {
        let watchdog = StallWatchdog(timeout: .seconds(30))
        let task = Task { try await watchdog.watch { _ in try await Task.sleep(for: .seconds(30)) } }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        await #expect(throws: DownloadError.internalError("the operation's own")) {
            try await watchdog.watch { _ in throw DownloadError.internalError("the operation's own") }
        }
    }

    @Test("an operation that is not Sendable runs watched, and its changes are seen by the caller")
    func nonsendable() async throws {
        let watchdog = StallWatchdog(timeout: .seconds(30), ticksByItself: false)
        var parts: [Int] = []
        try await watchdog.watchNonsendable { watch in
            for part in 0..<3 {
                parts.append(part)
                watch.waiting()
            }
        }
        #expect(parts == [0, 1, 2])
        let running = Task {
            try await watchdog.watchNonsendable { _ in try await Task.sleep(for: .seconds(300)) }
        }
        let start = ContinuousClock.now
        while watchdog.watchedCount == 0, start.duration(to: .now) < .seconds(60) {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(tick(watchdog, 5) == 1)
        await #expect(throws: DownloadError.self) { try await running.value }
    }

    @Test("the watchdog ticks only while something is watched")
    func ticksOnlyWhileWatching() async throws {
        let watchdog = StallWatchdog(timeout: .milliseconds(200))
        #expect(!watchdog.isTicking)
        try await watchdog.watch { _ in #expect(watchdog.isTicking) }
        let start = ContinuousClock.now
        while watchdog.isTicking, start.duration(to: .now) < .seconds(60) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(!watchdog.isTicking)
    }
}
