import Foundation
import HaulTestSupport
import Testing

@testable import HaulFleet
@testable import HaulKit

/// The fleet's host table (`haul_host`): one request schedule and one backoff per host for every worker, and what a
/// request's reservation costs.
@Suite(
    "The fleet's hosts in PostgreSQL",
    .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"))
struct PostgresHostBudgetTests {
    @Test("two workers take their requests from one schedule: 100 ms apart, whoever asks; and count the rest")
    func sharedSchedule() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let stores = await [
            try PostgresStoreTests.store(url, owner: "a"), try PostgresStoreTests.store(url, owner: "b"),
        ]
        let started = ContinuousClock.now
        var last: Duration = .zero
        for index in 0..<20 {
            last = try #require(
                await stores[index % 2].reserveRequest(host: "h.example", gap: .milliseconds(100), maxConnections: 8)
            ).wait
        }
        // The last slot is 19 gaps after the first, whoever asked (each worker alone would be 9 gaps on): its wait
        // plus the time the asking took is at least that, however the round trips varied.
        let span = last + started.duration(to: .now)
        #expect(span >= .milliseconds(1890), "\(span) for 19 gaps")
        // Requests sent without a reservation (to a host nothing limits) are counted, on a host's row or a new one.
        await stores[0].countRequests(host: "h.example", count: 5)
        await stores[1].countRequests(host: "new.example", count: 3)
        let statuses = try await stores[1].hostStatuses()
        #expect(statuses.map(\.host) == ["h.example", "new.example"])
        #expect(statuses.map(\.requests) == [25, 3])
        await server.stop()
    }

    @Test("a worker's requests are all counted in the fleet's host table once it shuts down")
    func everyRequestCounted() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let origin = try await TestOrigin.start()
        let directory = TemporaryDirectory()
        var configuration = Harness.configuration(directory)
        configuration.store = .sharedQueue(SharedQueue(url: url, workerName: "a"))
        configuration.runsDownloads = true
        let manager = try await DownloadManager(configuration: configuration)
        var ids: [DownloadID] = []
        for index in 0..<12 { ids.append(try await manager.add(origin.serve("/f\(index).bin", size: 100))) }
        for id in ids { _ = try await manager.wait(for: id) }
        await manager.shutdown()
        // Most went between two looks in the fleet's schedule (they are 100 ms apart); they are counted at the end.
        let store = try await PostgresStoreTests.store(url, owner: "reader")
        let statuses = try await store.hostStatuses()
        #expect(statuses.map(\.requests) == [origin.requests.count], "\(statuses)")
        await origin.stop()
        await server.stop()
    }

    @Test("a throttle one worker saw holds and backs off the host for the other; a learned policy paces it")
    func sharedBackoff() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let a = try await PostgresStoreTests.store(url, owner: "a")
        let b = try await PostgresStoreTests.store(url, owner: "b")
        for _ in 0..<10 { _ = await a.reserveRequest(host: "h.example", gap: nil, maxConnections: 8) }
        await a.recordThrottle(host: "h.example", reason: "429 Too Many Requests", hold: .seconds(30), connections: 8)
        // A hold far longer than the suite's load can delay the next call: what is left of it is still most of it.
        let held = try #require(await b.reserveRequest(host: "h.example", gap: nil, maxConnections: 8))
        #expect(held.wait >= .seconds(20), "\(held.wait) left of a 30 s hold")
        #expect(held.connectionCap == 4)
        let status = try #require(try await b.hostStatuses().first)
        #expect(status.throttles == 1)
        #expect(status.reason == "429 Too Many Requests")
        #expect(status.backoffRate != nil)
        #expect(status.lastThrottle != nil)

        await b.recordPolicy(host: "p.example", rate: 20, hold: nil)
        let started = ContinuousClock.now
        var last: Duration = .zero
        for _ in 0..<6 {
            last = try #require(await a.reserveRequest(host: "p.example", gap: nil, maxConnections: 8)).wait
        }
        // The policy's 20/s at its 90% margin: the sixth slot is 5 x 55.6 ms after the first.
        let span = last + started.duration(to: .now)
        #expect(span >= .milliseconds(275), "\(span) for 5 gaps")
        #expect(try await b.hostStatuses().first { $0.host == "p.example" }?.policyRate == 20)
        await server.stop()
    }

    @Test("what one reservation costs: one round trip (measured, written in docs/politeness.md)")
    func cost() async throws {
        let server = try await PostgresServer.start()
        let store = try await PostgresStoreTests.store(try await server.makeDatabase(), owner: "a")
        _ = await store.reserveRequest(host: "warm.example", gap: nil, maxConnections: 8)
        let count = 500
        let started = ContinuousClock.now
        for index in 0..<count {
            _ = await store.reserveRequest(host: "h\(index % 10).example", gap: nil, maxConnections: 8)
        }
        let each = started.duration(to: .now) / count
        print("haul_host_reserve: \(each) per request (\(count) requests, loopback PostgreSQL)")
        // A sanity bound only (the machine may be busy with the whole suite); docs/politeness.md has quiet figures.
        #expect(each < .milliseconds(500), "a reservation took \(each)")
        await server.stop()
    }
}
