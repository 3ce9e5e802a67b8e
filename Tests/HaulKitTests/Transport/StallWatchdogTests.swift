import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Stall watchdog")
struct StallWatchdogTests {
    @Test("a body waited for longer than the timeout is cancelled and fails as stalled, within a quarter more")
    func firesAfterTimeout() async throws {
        let watchdog = StallWatchdog(timeout: .milliseconds(400))
        let start = ContinuousClock.now
        let error = await #expect(throws: DownloadError.self) {
            try await watchdog.watch { _ in try await Task.sleep(for: .seconds(30)) }
        }
        let elapsed = start.duration(to: .now)
        #expect(error?.code == .stalled)
        #expect(elapsed >= .milliseconds(400), "fired early: \(elapsed)")
        // 500 ms at most when the machine keeps time; slack for a loaded one, far below the 30 s sleep.
        #expect(elapsed < .seconds(5), "took \(elapsed)")
    }

    @Test("time spent busy with a part (writing it, or held back by a speed limit) does not count")
    func busyTimeDoesNotCount() async throws {
        let watchdog = StallWatchdog(timeout: .milliseconds(300))
        let value = try await watchdog.watch { watch in
            watch.busy()
            try await Task.sleep(for: .seconds(1))
            watch.waiting()
            return 7
        }
        #expect(value == 7)
    }

    @Test("each part that arrives starts the count again")
    func partsRestartTheCount() async throws {
        let watchdog = StallWatchdog(timeout: .milliseconds(400))
        let parts = try await watchdog.watch { watch in
            for _ in 0..<6 {
                try await Task.sleep(for: .milliseconds(150))
                watch.waiting()
            }
            return 6
        }
        #expect(parts == 6)  // 0.9 s in all, never 0.4 s without a part
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
        let watchdog = StallWatchdog(timeout: .milliseconds(300))
        var parts: [Int] = []
        try await watchdog.watchNonsendable { watch in
            for part in 0..<3 {
                parts.append(part)
                watch.waiting()
            }
        }
        #expect(parts == [0, 1, 2])
        await #expect(throws: DownloadError.self) {
            try await watchdog.watchNonsendable { _ in try await Task.sleep(for: .seconds(30)) }
        }
    }

    @Test("the watchdog ticks only while something is watched")
    func ticksOnlyWhileWatching() async throws {
        let watchdog = StallWatchdog(timeout: .milliseconds(200))
        #expect(!watchdog.isTicking)
        try await watchdog.watch { _ in #expect(watchdog.isTicking) }
        let start = ContinuousClock.now
        while watchdog.isTicking, start.duration(to: .now) < .seconds(10) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(!watchdog.isTicking)
    }
}
