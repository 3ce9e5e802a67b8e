import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// Two managers on one database, as two processes (`haul run` and `haul pause` in another terminal) would be.
@Suite("Managers sharing one database")
struct SharedDatabaseTests {
    static func fastWatching(_ configuration: inout DownloadManager.Configuration) {
        configuration.externalChangeInterval = .milliseconds(100)
    }

    /// An editor that runs nothing, on the runner's database.
    static func editor(of runner: Harness) async throws -> DownloadManager {
        var configuration = Harness.configuration(runner.directory)
        configuration.runsDownloads = false
        return try await DownloadManager(configuration: configuration)
    }

    /// The state the database records for `id`: what another process sees.
    static func storedState(_ id: DownloadID, of runner: Harness) async throws -> DownloadState? {
        try await SQLiteDownloadStore(path: Harness.configuration(runner.directory).databaseURL.path).fetch(id)?.state
    }

    /// A runner with `slots` slots and ticks `tick` apart, on an origin that sends 500,000 bytes a second, with
    /// `files` (path, size) added together: the first `slots` start, the others are queued behind them.
    static func throttledRunner(
        tick: Duration, slots: Int = 1, files: [(String, Int)]
    ) async throws -> (Harness, [DownloadID]) {
        let origin = try await TestOrigin.start()
        origin.setFaults { $0.bytesPerSecond = 500_000 }
        let runner = try await Harness.make(origin: origin) {
            $0.externalChangeInterval = tick
            $0.maxConcurrentDownloads = slots
        }
        let ids = try await runner.manager.add(
            contentsOf: files.map { (origin.serve($0.0, size: $0.1), nil, DownloadOptions()) })
        return (runner, ids)
    }

    /// A second runner on `runner`'s database (another `haul run` of a shared queue), with one slot and ticks `tick`
    /// apart, once its start of `id`, which `runner` runs, was refused.
    static func refusedRunner(of runner: Harness, tick: Duration, refused id: DownloadID) async throws -> Harness {
        let other = try await runner.reopen {
            $0.externalChangeInterval = tick
            $0.maxConcurrentDownloads = 1
        }
        try await waitUntil {
            if case .runningElsewhere? = await other.manager.lifecycle.phase(of: id) { true } else { false }
        }
        return other
    }

    @Test("an editor's add is picked up by a runner")
    func addFromElsewhere() async throws {
        let runner = try await Harness.make(Self.fastWatching)
        let editor = try await Self.editor(of: runner)
        let url = runner.origin.serve("/added.bin", size: 300_000)

        let id = try await editor.add(url)
        #expect(await editor.snapshot(id)?.state == .queued)
        #expect(runner.origin.requests(to: "/added.bin").isEmpty, "an editor never downloads")

        let file = try await runner.manager.wait(for: id)
        expectContent(file, size: 300_000)
        await editor.shutdown()
        await runner.shutdown()
    }

    @Test("a download another process completed reports its size before its completion")
    func completionFromElsewhereHasItsSize() async throws {
        let runner = try await Harness.make(Self.fastWatching)
        let events = await runner.manager.events()
        let id = try await runner.manager.add(runner.origin.serve("/sized.bin", size: 123_456), paused: true)
        // Another process (a worker of the fleet, another `haul run`) completes it.
        let other = try SQLiteDownloadStore(path: Harness.configuration(runner.directory).databaseURL.path)
        var record = try #require(try await other.fetch(id))
        record.state = .completed
        record.completedAt = Date()
        record.updatedAt = Date()
        record.destinationPath = runner.directory.file("sized.bin").path
        record.transfer.totalBytes = 123_456
        try await other.saveLifecycleAndTransfers(lifecycle: [record], transfers: [record])
        var received: Int64?
        for await event in events where event.id == id {
            if case .progress(let progress) = event.change { received = progress.receivedBytes }
            if case .status(.completed) = event.change { break }
        }
        #expect(received == 123_456, "\(String(describing: received)) bytes reported before the completion")
        await runner.shutdown()
    }

    @Test("a look at the database never puts back what this process changed while the look read it")
    func looksNeverUndoChangesMadeMeanwhile() async throws {
        // The runner looks at the database every millisecond, and another process writes all the time (its looks
        // find changes): each look reads the runner's own records too, while the runner changes them.
        let runner = try await Harness.make { $0.externalChangeInterval = .milliseconds(1) }
        let editor = try await Self.editor(of: runner)
        let url = runner.origin.serve("/options.bin", size: 1_000)
        let id = try await runner.manager.add(url, paused: true)
        let other = try await editor.add(runner.origin.url("/other.bin"), paused: true)
        let writing = Task {
            var priority = 0
            while !Task.isCancelled {
                priority += 1
                _ = try? await editor.add(
                    runner.origin.url("/other.bin"), options: .init(priority: priority), paused: true)
            }
        }
        var undone: [Int] = []
        for priority in 1...300 {
            // Added again with new options: they are the download's at once, and stay so.
            #expect(try await runner.manager.add(url, options: .init(priority: priority), paused: true) == id)
            try await Task.sleep(for: .milliseconds(1))
            if await runner.manager.snapshot(id)?.options.priority != priority { undone.append(priority) }
        }
        writing.cancel()
        await writing.value
        #expect(undone.isEmpty, "the options given were undone after \(undone.count) of 300 adds: \(undone.prefix(5))")
        #expect(runner.origin.requests(to: "/options.bin").isEmpty && runner.origin.requests(to: "/other.bin").isEmpty)
        #expect(other != id)
        await editor.shutdown()
        await runner.shutdown()
    }

    @Test("pause, resume and remove from an editor reach the running download")
    func controlFromElsewhere() async throws {
        let origin = try await TestOrigin.start()
        let size = 4_000_000
        let url = origin.serve("/slow.bin", size: size)
        origin.setFaults { $0.bytesPerSecond = 1_000_000 }
        let runner = try await Harness.make(origin: origin, Self.fastWatching)
        let id = try await runner.manager.add(url, options: .init(connections: 1))
        try await runner.waitForProgress(id, atLeast: 200_000)

        // `running` reaches the database at the runner's next tick.
        try await waitUntil { await (try? Self.storedState(id, of: runner)) == .running }
        let editor = try await Self.editor(of: runner)
        #expect(await editor.snapshot(id)?.state == .running)
        try await editor.pause(id)
        try await runner.waitForState(id, .paused, timeout: .seconds(10))
        let pausedAt = await runner.manager.snapshot(id)?.receivedBytes ?? 0

        origin.setFaults { $0.bytesPerSecond = nil }
        try await editor.resume(id)
        let file = try await runner.manager.wait(for: id)
        expectContent(file, size: size)
        let resumed = origin.requests(to: "/slow.bin").last
        #expect(resumed?.range != nil, "continued from \(pausedAt), not from 0")

        let second = try await runner.manager.add(origin.serve("/second.bin", size: size))
        origin.setFaults { $0.bytesPerSecond = 1_000_000 }
        try await runner.waitForProgress(second, atLeast: 100_000)
        let editor2 = try await Self.editor(of: runner)
        try await editor2.remove(second)
        try await waitUntil { await runner.manager.snapshot(second) == nil }
        #expect(!FileManager.default.fileExists(atPath: runner.directory.file("second.bin.part").path))

        await editor.shutdown()
        await editor2.shutdown()
        await runner.shutdown()
    }

    @Test("running is recorded at the next tick, and never over a pause another process wrote before it")
    func runningRecordedAtTheNextTick() async throws {
        let origin = try await TestOrigin.start()
        let url = origin.serve("/lazy.bin", size: 4_000_000)
        origin.setFaults { $0.bytesPerSecond = 500_000 }
        let tick = Duration.seconds(4)
        let runner = try await Harness.make(origin: origin) { $0.externalChangeInterval = tick }
        let added = ContinuousClock.now
        let id = try await runner.manager.add(url, options: .init(connections: 1))
        try await runner.waitForProgress(id, atLeast: 1)
        #expect(await runner.manager.snapshot(id)?.state == .running)
        let stored = try await Self.storedState(id, of: runner)
        // Only before the first tick: on a machine so loaded that a tick has passed, running may be recorded.
        if added.duration(to: .now) < tick {
            #expect(stored == .queued, "not recorded before the first tick")
        }

        // Another process pauses it while the database still says queued.
        let editor = try await Self.editor(of: runner)
        try await editor.pause(id)
        await editor.shutdown()
        try await runner.waitForState(id, .paused, timeout: .seconds(10))
        try await Task.sleep(for: tick + .milliseconds(500))
        #expect(
            try await Self.storedState(id, of: runner) == .paused,
            "the pending running mark did not overwrite the pause")

        try await runner.manager.resume(id)
        try await waitUntil { await (try? Self.storedState(id, of: runner)) == .running }
        origin.setFaults { $0.bytesPerSecond = nil }
        _ = try await runner.manager.wait(for: id)
        #expect(try await Self.storedState(id, of: runner) == .completed)
        await runner.shutdown()
    }

    @Test("the next queued download is claimed with a start, and given back at the next tick if it did not start")
    func claimAheadIsGivenBack() async throws {
        // Ticks come every 10 s from the manager's start, so the claim ahead (made when the first download starts) is
        // still held when the other store looks, on a loaded machine too; the first download lasts 16 s, past the
        // tick that gives the claim back.
        let tick = Duration.seconds(10)
        let (runner, ids) = try await Self.throttledRunner(
            tick: tick, files: [("/first.bin", 8_000_000), ("/next.bin", 1_000), ("/last.bin", 1_000)])
        let origin = runner.origin
        let (first, next, last) = (ids[0], ids[1], ids[2])
        try await runner.waitForProgress(first, atLeast: 1)
        let other = try SQLiteDownloadStore(path: Harness.configuration(runner.directory).databaseURL.path)
        // One slot: one download claimed ahead, the next one.
        #expect(await other.claimedElsewhere([next, last]) == [next])
        try await waitUntil(timeout: tick * 3) { await other.claimedElsewhere([next]).isEmpty }
        #expect(
            await other.claim(next, share: HostShare(host: "127.0.0.1", wanted: 1, limit: 8))
                == .granted(connections: 1))
        await other.release(next)
        origin.setFaults { $0.bytesPerSecond = nil }
        for id in [first, next, last] { _ = try await runner.manager.wait(for: id) }
        await runner.shutdown()
    }

    @Test(
        "a runner whose starts were all refused follows the downloads another runs: it learns their ends at once, not at its next tick"
    )
    func refusedStartsAreFollowed() async throws {
        // Ticks far apart: neither runner learns the other's changes from a tick while the test runs.
        let tick = Duration.seconds(120)
        // The first download lasts 16 s at the origin's rate, which is lifted once the second runner is set.
        let (runner, ids) = try await Self.throttledRunner(
            tick: tick, files: [("/first.bin", 8_000_000), ("/next.bin", 1_000)])
        let origin = runner.origin
        try await runner.waitForProgress(ids[0], atLeast: 1)
        // A second runner on the database (another `haul run` of a shared queue): the first download's claim and the
        // next one's (claimed ahead) are the first runner's, so its starts are refused and nothing runs there.
        let other = try await Self.refusedRunner(of: runner, tick: tick, refused: ids[0])
        #expect(await other.manager.count(in: [.queued, .running]) == 2)
        origin.setFaults { $0.bytesPerSecond = nil }
        for id in ids { expectContent(try await runner.manager.wait(for: id), size: id == ids[0] ? 8_000_000 : 1_000) }
        // Learnt by following them (a look every 50 ms), well before a tick.
        try await waitUntil(timeout: .seconds(15)) { await other.manager.count(in: [.queued, .running]) == 0 }
        for id in ids { #expect(await other.manager.snapshot(id)?.state == .completed) }
        await other.manager.shutdown()
        await runner.shutdown()
    }

    @Test(
        "a runner with nothing to run follows the head of its run queue: another runner's completion there is seen at once"
    )
    func runQueueHeadIsFollowed() async throws {
        let tick = Duration.seconds(120)
        // Two slots: the first runner fetches both at once, the long one (16 s) long after the short one (2 s).
        let (runner, ids) = try await Self.throttledRunner(
            tick: tick, slots: 2, files: [("/long.bin", 8_000_000), ("/short.bin", 1_000_000)])
        let origin = runner.origin
        let (long, short) = (ids[0], ids[1])
        try await runner.waitForProgress(long, atLeast: 1)
        // One slot here: its start of the long download is refused, and the short one waits in its run queue, where
        // only a look at the queue's head can learn that the first runner completed it.
        let other = try await Self.refusedRunner(of: runner, tick: tick, refused: long)
        expectContent(try await runner.manager.wait(for: short), size: 1_000_000)
        try await waitUntil(timeout: .seconds(10)) { await other.manager.snapshot(short)?.state == .completed }
        #expect(await runner.manager.snapshot(long)?.state == .running, "seen while the long download still ran")
        origin.setFaults { $0.bytesPerSecond = nil }
        expectContent(try await runner.manager.wait(for: long), size: 8_000_000)
        try await waitUntil(timeout: .seconds(15)) { await other.manager.count(in: [.queued, .running]) == 0 }
        await other.manager.shutdown()
        await runner.shutdown()
    }

    @Test("a download claimed ahead and then paused by another process does not start")
    func pauseOfAClaimAhead() async throws {
        // A tick long enough that the runner has not seen the pause when its slot frees.
        let (runner, ids) = try await Self.throttledRunner(
            tick: .seconds(30), files: [("/first.bin", 4_000_000), ("/next.bin", 1_000)])
        let origin = runner.origin
        let (first, next) = (ids[0], ids[1])
        try await runner.waitForProgress(first, atLeast: 1)
        let other = try SQLiteDownloadStore(path: Harness.configuration(runner.directory).databaseURL.path)
        #expect(await other.claimedElsewhere([next]) == [next], "claimed ahead")
        let editor = try await Self.editor(of: runner)
        try await editor.pause(next)
        await editor.shutdown()
        try await Task.sleep(for: DownloadManager.claimAheadLifetime * 2)
        origin.setFaults { $0.bytesPerSecond = nil }
        _ = try await runner.manager.wait(for: first)
        try await runner.waitForState(next, .paused, timeout: .seconds(10))
        #expect(origin.requests(to: "/next.bin").isEmpty, "the pause written before its start holds")
        #expect(try await Self.storedState(next, of: runner) == .paused)
        await runner.shutdown()
    }
}

func waitUntil(timeout: Duration = .seconds(10), _ condition: () async -> Bool) async throws {
    let start = ContinuousClock.now
    while await !condition() {
        if start.duration(to: .now) > timeout { throw HarnessTimeout(what: "a condition") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
