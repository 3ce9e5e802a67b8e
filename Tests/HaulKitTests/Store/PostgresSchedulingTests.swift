import Foundation
import HaulTestSupport
import Testing

@testable import HaulFleet
@testable import HaulKit

/// A worker on the shared queue between its ticks: its queued downloads go on as soon as its host's connections are
/// given back, and with nothing left to run it sees the other workers' completions as they come.
@Suite(
    "A worker on the shared queue between ticks",
    .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"))
struct PostgresSchedulingTests {
    /// A worker (4 slots, 4 connections per host) and an editor on one new database; the tick is far off (60 s), so
    /// only give-backs and retries move a held-back queue.
    struct Setup {
        let server: PostgresServer
        let origin: TestOrigin
        let worker: DownloadManager
        let editor: DownloadManager
        /// A paused download of the origin's host whose lease, another worker's, holds `held` of its connections.
        let ghost: DownloadID
        let database: String

        static func make(holding held: Int, ghostState: DownloadState = .paused) async throws -> Setup {
            let server = try await PostgresServer.start()
            let url = try await server.makeDatabase()
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            func configuration(_ name: String, runs: Bool) -> DownloadManager.Configuration {
                var configuration = Harness.configuration(directory)
                configuration.downloadDirectory = directory.file(name)
                configuration.store = .sharedQueue(SharedQueue(url: url, workerName: name))
                configuration.runsDownloads = runs
                configuration.maxConcurrentDownloads = 4
                configuration.maxConnectionsPerHost = 4
                configuration.externalChangeInterval = .seconds(60)
                return configuration
            }
            let editor = try await DownloadManager(configuration: configuration("editor", runs: false))
            let ghost = try await editor.add(origin.serve("/ghost.bin", size: 10))
            try await editor.pause(ghost)
            let database = url.lastPathComponent
            _ = try server.sql(
                """
                UPDATE haul_download SET leaseOwner = 'ghost', leaseExpires = now() + interval '1 hour',
                    leaseHost = '127.0.0.1', leaseConnections = \(held), state = '\(ghostState.rawValue)'
                WHERE id = \(ghost.rawValue)
                """, database: database)
            let worker = try await DownloadManager(configuration: configuration("worker", runs: true))
            return Setup(
                server: server, origin: origin, worker: worker, editor: editor, ghost: ghost, database: database)
        }

        /// The other worker gives its connections back (no event reaches this one).
        func giveBack() throws {
            _ = try server.sql(
                "UPDATE haul_download SET leaseConnections = 0 WHERE id = \(ghost.rawValue)", database: database)
        }

        /// Waits (at most 55 s, short of the 60 s tick) until `count` downloads are completed; returns how long it
        /// took.
        func completion(of count: Int) async throws -> Duration {
            let start = ContinuousClock.now
            while start.duration(to: .now) < .seconds(55), await worker.count(in: [.completed]) < count {
                try await Task.sleep(for: .milliseconds(50))
            }
            return start.duration(to: .now)
        }

        /// Whether the worker comes to have `expected` downloads in `states` (within 20 s). A download whose claim is
        /// on its way counts as running until the answer: on a loaded machine that takes a while.
        func settles(_ states: Set<DownloadState>, at expected: Int) async throws -> Bool {
            let start = ContinuousClock.now
            while await worker.count(in: states) != expected, start.duration(to: .now) < .seconds(20) {
                try await Task.sleep(for: .milliseconds(20))
            }
            return await worker.count(in: states) == expected
        }

        func stop() async {
            await worker.shutdown()
            await editor.shutdown()
            await origin.stop()
            await server.stop()
        }
    }

    @Test("one host, its connections held elsewhere and then given back: the whole queue runs without waiting a tick")
    func heldBackQueueGoesOn() async throws {
        // Another worker holds 3 of the host's 4 connections: the first download takes the last one and runs for
        // about 4 s; the others find the host busy.
        let setup = try await Setup.make(holding: 3)
        setup.origin.setFaults { $0.bytesPerSecond = 500_000 }
        var ids = [try await setup.worker.add(setup.origin.serve("/first.bin", size: 2_000_000))]
        for index in 0..<24 {
            ids.append(try await setup.worker.add(setup.origin.serve("/small\(index).bin", size: 8_000)))
        }
        #expect(try await setup.settles([.running], at: 1), "only the first runs: the host has no other connection")
        #expect(await setup.worker.state(of: ids[0]) == .running)
        try setup.giveBack()
        let took = try await setup.completion(of: ids.count)
        let queued = await setup.worker.count(in: [.queued])
        #expect(await setup.worker.count(in: [.completed]) == ids.count, "\(queued) still queued")
        // About 4 s for the first, then the small ones (5 s for the whole test alone, 23 s for this part once in
        // the loaded suite of a CI run); the tick would have come after 60 s.
        #expect(took < .seconds(45), "all \(ids.count) done \(took) after the connections were given back")
        await setup.stop()
    }

    @Test("a worker with nothing left to run sees another worker's completion at once, not at the tick")
    func idleWorkerFollowsOthers() async throws {
        let setup = try await Setup.make(holding: 1, ghostState: .running)
        #expect(await setup.worker.state(of: setup.ghost) == .running, "the other worker's download runs")
        // A moment with nothing changed: looks that find the token where it was read nothing.
        try await Task.sleep(for: .milliseconds(300))
        #expect(await setup.worker.state(of: setup.ghost) == .running)
        // The other worker completes it (a write of the record's columns notifies every worker).
        _ = try setup.server.sql(
            """
            UPDATE haul_download SET state = 'completed', completedAt = now(), updatedAt = now(), leaseOwner = NULL,
                leaseExpires = NULL, leaseConnections = 0
            WHERE id = \(setup.ghost.rawValue)
            """, database: setup.database)
        let start = ContinuousClock.now
        while await setup.worker.count(in: [.queued, .running]) > 0, start.duration(to: .now) < .seconds(30) {
            try await Task.sleep(for: .milliseconds(20))
        }
        // Within a few looks (50 ms apart); the tick would have come after 60 s (the bound allows for the suite's load).
        #expect(await setup.worker.state(of: setup.ghost) == .completed)
        #expect(start.duration(to: .now) < .seconds(30))
        await setup.stop()
    }

    @Test(
        "every connection of the host held by another worker, then given back: asked again within a second, not at the tick"
    )
    func busyHostAskedAgain() async throws {
        let setup = try await Setup.make(holding: 4)
        var ids: [DownloadID] = []
        for index in 0..<12 {
            ids.append(try await setup.worker.add(setup.origin.serve("/small\(index).bin", size: 8_000)))
        }
        // Every start's claim answered, none granted; and the held-back queue asked again a few times since.
        #expect(try await setup.settles([.running], at: 0), "the host has no connection for it")
        try await Task.sleep(for: .seconds(4))
        #expect(await setup.worker.count(in: [.completed]) == 0, "the host has no connection for it")
        // Busy for seconds, asked again at most a second apart, though the tick is a minute.
        #expect(await setup.worker.busyRetryDelay <= .seconds(1))
        try setup.giveBack()
        let took = try await setup.completion(of: ids.count)
        #expect(await setup.worker.count(in: [.completed]) == ids.count)
        // Asked again 0.1, 0.3, 0.7, 1.5 s after it was found busy, then each second; the tick would have come after
        // 60 s (the bound allows for the suite's load).
        #expect(took < .seconds(30), "all \(ids.count) done \(took) after the connections were given back")
        await setup.stop()
    }
}
