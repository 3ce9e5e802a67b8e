import Foundation
import HaulTestSupport
import Testing

@testable import HaulFleet
@testable import HaulKit

/// A worker on the shared queue whose host had no connection left: its queued downloads go on as soon as connections
/// are given back, not at the next tick.
@Suite(
    "A worker's queue after its host was busy",
    .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"))
struct PostgresSchedulingTests {
    @Test("one host, its connections held elsewhere and then given back: the whole queue runs without waiting a tick")
    func heldBackQueueGoesOn() async throws {
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
            // The tick (which gives every held-back download another try) is far off: only give-backs count here.
            configuration.externalChangeInterval = .seconds(60)
            return configuration
        }
        // Another worker holds 3 of the host's 4 connections (a lease on a paused download).
        let editor = try await DownloadManager(configuration: configuration("editor", runs: false))
        let ghost = try await editor.add(origin.serve("/ghost.bin", size: 10))
        try await editor.pause(ghost)
        let database = url.lastPathComponent
        _ = try server.sql(
            """
            UPDATE haul_download SET leaseOwner = 'ghost', leaseExpires = now() + interval '1 hour',
                leaseHost = '127.0.0.1', leaseConnections = 3 WHERE id = \(ghost.rawValue)
            """, database: database)
        // The first download takes the last connection and runs for about 2 s; the others find the host busy.
        origin.setFaults { $0.bytesPerSecond = 500_000 }
        let worker = try await DownloadManager(configuration: configuration("worker", runs: true))
        var ids = [try await worker.add(origin.serve("/first.bin", size: 1_000_000))]
        for index in 0..<24 { ids.append(try await worker.add(origin.serve("/small\(index).bin", size: 8_000))) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(await worker.count(in: [.running]) == 1, "only the first runs: the host has no other connection")
        // The other worker gives its connections back.
        _ = try server.sql(
            "UPDATE haul_download SET leaseConnections = 0 WHERE id = \(ghost.rawValue)", database: database)
        let freed = ContinuousClock.now
        while freed.duration(to: .now) < .seconds(40), await worker.count(in: [.completed]) < ids.count {
            try await Task.sleep(for: .milliseconds(50))
        }
        let took = freed.duration(to: .now)
        let queued = await worker.count(in: [.queued])
        #expect(await worker.count(in: [.completed]) == ids.count, "\(queued) still queued")
        // About 2 s for the first, then the small ones; the tick would have come after 60 s.
        #expect(took < .seconds(15), "all \(ids.count) done \(took) after the connections were given back")
        await worker.shutdown()
        await editor.shutdown()
        await origin.stop()
        await server.stop()
    }
}
