import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

@Suite("Waiting for many downloads together")
struct WaitingTests {
    @Test("returns once the last download has completed or failed, and at once for ended and unknown ones")
    func waitsUntilAllEnded() async throws {
        let harness = try await Harness.make(inMemory: true)
        // Slow enough that all are still running when the wait starts.
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        var ids: [DownloadID] = []
        for number in 0..<3 {
            ids.append(try await harness.manager.add(harness.origin.serve("/w\(number).bin", size: 300 * 1024)))
        }
        ids.append(try await harness.manager.add(harness.origin.url("/missing.bin")))

        await harness.manager.waitUntilEnded(ids)

        #expect(await harness.manager.states(of: ids) == [.completed, .completed, .completed, .failed])
        for snapshot in await harness.manager.snapshots(of: Array(ids.prefix(3))) {
            expectContent(try #require(snapshot.file), size: 300 * 1024)
        }
        let again = Task { await harness.manager.waitUntilEnded(ids + [DownloadID(rawValue: 999_999)]) }
        #expect(await ends(again, within: .seconds(5)))
        await harness.shutdown()
    }

    @Test("returns when the manager shuts down while a download still runs")
    func endsAtShutdown() async throws {
        let (harness, id, waiting) = try await waitingForStalledDownload()

        await harness.manager.shutdown()

        #expect(await ends(waiting, within: .seconds(5)))
        // Waiting after the shutdown returns at once too.
        let late = Task { await harness.manager.waitUntilEnded([id]) }
        #expect(await ends(late, within: .seconds(5)))
        await harness.origin.stop()
    }

    @Test("returns when the waiting task is cancelled; the download runs on")
    func endsWhenCancelled() async throws {
        let (harness, id, waiting) = try await waitingForStalledDownload()

        waiting.cancel()

        #expect(await ends(waiting, within: .seconds(5)))
        #expect(await harness.manager.state(of: id) == .running)
        await harness.shutdown()
    }

    /// A manager whose one download stalls after 1,000 bytes, and a task waiting for it (checked still waiting).
    private func waitingForStalledDownload() async throws -> (Harness, DownloadID, Task<Void, Never>) {
        let harness = try await Harness.make(inMemory: true)
        harness.origin.setFaults {
            $0.stallAfter = 1000
            $0.stallDuration = .seconds(60)
        }
        let id = try await harness.manager.add(harness.origin.serve("/stalls.bin", size: 100_000))
        try await harness.waitForProgress(id, atLeast: 1000)
        let waiting = Task { await harness.manager.waitUntilEnded([id]) }
        #expect(!(await ends(waiting, within: .milliseconds(200))))
        return (harness, id, waiting)
    }

    /// Whether `task` ends within `limit` (polled, so a task that never ends fails the check instead of hanging).
    private func ends(_ task: Task<Void, Never>, within limit: Duration) async -> Bool {
        let ended = Flag()
        Task {
            await task.value
            ended.set()
        }
        let start = ContinuousClock.now
        while start.duration(to: .now) < limit, !ended.isSet {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return ended.isSet
    }

    private final class Flag: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }
}
