import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulFleet
@testable import HaulKit

/// The fleet's store awaits PostgreSQL instead of blocking a thread: with two workers on a PostgreSQL made slow, the
/// cooperative pool (two threads on a two-core machine) still runs everything else on time.
///
/// The tasks run on the HTTP client's two event loops (``TaskPlacement/runTasksOnEventLoops()``, as `haul run` and
/// `haul get` do): a fixed pool of two threads, so a store call that blocked one would stall everything on it (on
/// Linux, Dispatch's threads for Swift's own pool grow when some block, which would hide it).
///
/// It takes the process's executor and measures it, which the other tests beside it would disturb: it runs only with
/// `HAUL_ISOLATED=1`, in a test process of its own (`.ci/run` runs it so after the suite).
@Suite(
    "The shared queue does not block the cooperative pool",
    .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"),
    .enabled(
        if: ProcessInfo.processInfo.environment["HAUL_ISOLATED"] == "1",
        "measures the cooperative pool, so it runs alone with HAUL_ISOLATED=1 (.ci/run does)"))
struct PostgresResponsivenessTests {
    /// How long PostgreSQL takes for each row a statement updates (a trigger sleeps).
    static let slowness = 1.0

    @Test("two workers, every update 1 s slow (pg_sleep in a trigger): a task every 10 ms keeps its period")
    func poolStaysResponsive() async throws {
        #expect(await TaskPlacement.runTasksOnEventLoops(), "the tasks run on the two event loops from here on")
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let origin = try await TestOrigin.start()
        let directory = TemporaryDirectory()
        func worker(_ name: String) async throws -> DownloadManager {
            var configuration = Harness.configuration(directory)
            configuration.downloadDirectory = directory.file(name)
            configuration.store = .sharedQueue(SharedQueue(url: url, workerName: name))
            return try await DownloadManager(configuration: configuration)
        }
        let first = try await worker("a")
        // The schema exists now: from here on, every row updated costs a second.
        _ = try server.sql(
            """
            CREATE FUNCTION haul_slow() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(\(Self.slowness)); RETURN NEW; END $$;
            CREATE TRIGGER haul_slow BEFORE UPDATE ON haul_download FOR EACH ROW EXECUTE FUNCTION haul_slow();
            """, database: url.lastPathComponent)
        let second = try await worker("b")

        // The ticker: the longest time between two wake-ups of a task that sleeps 10 ms at a time.
        let longest = Mutex<Duration>(.zero)
        let ticker = Task {
            var last = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(10))
                let now = ContinuousClock.now
                longest.withLock { $0 = max($0, now - last) }
                last = now
            }
        }
        let sizes = [10_000, 20_000, 30_000, 40_000]
        var ids: [DownloadID] = []
        for (index, size) in sizes.enumerated() {
            ids.append(try await first.add(origin.serve("/f\(index).bin", size: size)))
        }
        let started = ContinuousClock.now
        for id in ids {
            while started.duration(to: .now) < .seconds(120) {
                let states = [await first.snapshot(id)?.state, await second.snapshot(id)?.state]
                if states.contains(.completed) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        ticker.cancel()
        let gap = longest.withLock { $0 }
        print(
            "two workers, updates \(Self.slowness) s slow: done in \(started.duration(to: .now)), longest tick \(gap)")
        for id in ids {
            let states = [await first.snapshot(id)?.state, await second.snapshot(id)?.state]
            #expect(states.contains(.completed), "download \(id): \(states)")
        }
        // A blocked cooperative thread on each worker's store call stops the ticker for a whole second at a time.
        #expect(gap < .milliseconds(600), "the ticker waited \(gap) at once")
        await first.shutdown()
        await second.shutdown()
        await origin.stop()
        await server.stop()
    }
}
