import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// The failure policy against a misbehaving origin, with one connection and with the CLI's default of four: every
/// bound holds, progress on any connection counts, and nothing hammers the server.
@Suite("Failure policy", .serialized)
struct FailurePolicyTests {
    /// Runs a download to its end within `limit` of real time; returns its error (nil when it completed).
    private func outcome(
        _ harness: Harness, _ url: URL, connections: Int, limit: Duration = .seconds(120)
    ) async throws -> (id: DownloadID, error: DownloadError?) {
        let manager = harness.manager
        let id = try await manager.add(url, options: .init(connections: connections))
        do {
            _ = try await withDeadline(limit, "download \(id)") { try await manager.wait(for: id) }
            return (id, nil)
        } catch let error as DownloadError {
            #expect(await manager.snapshot(id)?.state == .failed)
            return (id, error)
        }
    }

    @Test("500 forever: given up when no byte came for the time bound, never sleeping past it", arguments: [1, 4])
    func serverErrorForever(connections: Int) async throws {
        let clock = MockClock()
        let harness = try await Harness.make {
            $0.clock = clock
            $0.retry = RetryPolicy()  // 1 s doubling to 60 s, 10 attempts
            $0.retry.maxTimeWithoutProgress = .seconds(90)
        }
        harness.origin.respond("/down", status: 500)
        let manager = harness.manager
        let id = try await manager.add(harness.origin.url("/down"), options: .init(connections: connections))
        var slept: Duration = .zero
        while await manager.snapshot(id)?.state != .failed {
            guard (try? await clock.waitForSleepers(1, timeout: .seconds(5))) != nil else { break }
            let delay = try #require(clock.pendingDelays.first)
            slept += delay
            clock.advance(by: delay)
        }
        try await harness.waitForState(id, .failed)
        let error = try #require(await manager.snapshot(id)?.lastError)
        #expect(error.code == .serverError)
        #expect(error.summary.contains("no new data for 90 s"), "\(error)")
        #expect(slept <= .seconds(90), "slept \(slept) in all")
        #expect(slept >= .seconds(60), "gave up early: \(slept)")
        let requests = harness.origin.requests(to: "/down").count
        #expect((6...10).contains(requests), "\(requests) requests")
        await harness.shutdown()
    }

    @Test("a server that stalls every response at the same byte fails within the time bound", arguments: [1, 4])
    func stallsAtSameByte(connections: Int) async throws {
        let harness = try await Harness.make {
            $0.stallTimeout = .milliseconds(500)
            $0.retry.maxTimeWithoutProgress = .seconds(3)
            $0.retry.maxAttempts = 1000
            $0.minimumSegmentSize = 128 * 1024
        }
        let size = 2 * 1024 * 1024
        let url = harness.origin.serve("/stuck.bin", size: size)
        harness.origin.setFaults {
            $0.stallAtByte = size * 3 / 10
            $0.stallDuration = .seconds(30)
        }
        let start = ContinuousClock.now
        let (_, error) = try await outcome(harness, url, connections: connections, limit: .seconds(120))
        let elapsed = start.duration(to: .now)
        let failure = try #require(error)
        #expect(failure.code == .stalled || failure.code == .networkFailure, "\(failure)")
        #expect(failure.summary.contains("no new data for 3 s"), "\(failure)")
        #expect(elapsed < .seconds(20), "took \(elapsed)")  // 3 s bound + a stall timeout, on a loaded machine
        await harness.shutdown()
    }

    @Test(
        "a download held back by its speed limit for longer than the stall timeout is not taken for stalled",
        arguments: [1, 4])
    func throttledIsNotStalled(connections: Int) async throws {
        let harness = try await Harness.make {
            $0.stallTimeout = .seconds(1.5)
            $0.minimumSegmentSize = 128 * 1024
        }
        let size = 256 * 1024
        let url = harness.origin.serve("/throttled.bin", size: size)
        let events = await harness.manager.events()
        // 32 KiB/s: waits of more than the stall timeout between reads of the body, which the server sent at once.
        let id = try await harness.manager.add(url, options: .init(speedLimit: 32 * 1024, connections: connections))
        let file = try await withDeadline(.seconds(60), "download \(id)") { try await harness.manager.wait(for: id) }
        expectContent(file, size: size)
        #expect(await retryCodes(events, id) == [], "no response was dropped as stalled and asked for again")
        #expect(await harness.manager.snapshot(id)?.lastError == nil)
        await harness.shutdown()
    }

    @Test("a response that falls to a trickle is dropped and resumed on a fresh connection", arguments: [1, 4])
    func trickleIsDropped(connections: Int) async throws {
        let harness = try await Harness.make {
            $0.lowestSpeed = 1024
            $0.lowSpeedWindow = .seconds(1)
            $0.minimumSegmentSize = 128 * 1024
        }
        let size = 1024 * 1024 + 7
        let url = harness.origin.serve("/trickle.bin", size: size)
        harness.origin.setFaults {
            $0.trickle = (after: size / 5, bytesPerSecond: 128)
            $0.trickleTimes = 1
        }
        let events = await harness.manager.events()
        let (id, error) = try await outcome(harness, url, connections: connections, limit: .seconds(120))
        #expect(error == nil, "\(String(describing: error))")
        expectContent(harness.directory.file("trickle.bin"), size: size)
        let requests = harness.origin.requests(to: "/trickle.bin")
        #expect(requests.count >= 2)
        // The trickling response was abandoned: it sent little past the point where it slowed down.
        #expect(requests[0].bodyBytesSent < size / 5 + 64 * 1024, "\(requests[0].bodyBytesSent)")
        if connections == 1 {
            // Alone, the connection is dropped as too slow and a fresh one resumes where the trickle began (a few
            // trickled bytes count).
            let resumedAt = requests.dropFirst().compactMap { request in
                request.range.flatMap { Int($0.dropFirst(6).prefix { $0 != "-" }) }
            }
            #expect(resumedAt.contains { $0 >= size / 5 && $0 < size / 5 + 4096 }, "\(resumedAt)")
            #expect(await retryCodes(events, id).contains(.tooSlow))
        }
        // With several, a fast connection may split the slow one's segment and take its rest before the window
        // ends; which of the two ends it depends on timing, and both are right.
        await harness.shutdown()
    }

    @Test(
        "bytes on any segment reset the count: every response cut after 16-96 KiB still completes",
        arguments: [1, 4])
    func cutsEveryResponse(connections: Int) async throws {
        let harness = try await Harness.make {
            $0.retry.maxAttempts = 5
            $0.minimumSegmentSize = 256 * 1024
        }
        let size = 2 * 1024 * 1024
        let url = harness.origin.serve("/flaky.bin", size: size)
        harness.origin.setFaults { $0.cutEachWithin = 16 * 1024...96 * 1024 }
        let (_, error) = try await outcome(harness, url, connections: connections, limit: .seconds(120))
        #expect(error == nil, "\(String(describing: error))")
        expectContent(harness.directory.file("flaky.bin"), size: size)
        // Roughly one request per cut, each resuming where the last stopped.
        let requests = harness.origin.requests(to: "/flaky.bin").count
        #expect(requests < 2 * size / (16 * 1024), "\(requests) requests")
        #expect(harness.origin.bodyBytesSent(to: "/flaky.bin") < size + size / 2)
        await harness.shutdown()
    }

    @Test(
        "a server whose ETag changes on every response is finished with the new copy it sends, never a livelock",
        arguments: [1, 4])
    func rotatingETag(connections: Int) async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 128 * 1024 }
        let size = 1024 * 1024 + 5
        let url = harness.origin.serve("/balanced.bin", size: size)
        harness.origin.setFaults {
            $0.rotatesValidators = true
            // Inside the first response, also when it is the bounded first request of several connections.
            $0.cutAfter = size / 5
            $0.cutTimes = 1
        }
        let events = await harness.manager.events()
        let (id, error) = try await outcome(harness, url, connections: connections, limit: .seconds(120))
        #expect(error == nil, "\(String(describing: error))")
        expectContent(harness.directory.file("balanced.bin"), size: size)
        let requests = harness.origin.requests(to: "/balanced.bin").count
        #expect(requests <= 2 * connections + 2, "\(requests) requests")
        #expect(harness.origin.bodyBytesSent(to: "/balanced.bin") < 3 * size)
        #expect(await restartCount(events, id) <= 1)
        await harness.shutdown()
    }

    @Test(
        "restarts are capped: a server that always sends a broken 206 fails as unstable, with backoff",
        arguments: [1, 4])
    func restartsCapped(connections: Int) async throws {
        let harness = try await Harness.make { $0.retry.maxRestarts = 3 }
        let url = harness.origin.serve("/liar.bin", size: 1000)
        let broken = (206, [("Content-Range", "bytes 0-99/1000")])
        harness.origin.setFaults { $0.scripted = Array(repeating: broken, count: 1000) }
        let (_, error) = try await outcome(harness, url, connections: connections, limit: .seconds(120))
        let failure = try #require(error)
        #expect(failure.code == .resourceUnstable, "\(failure)")
        #expect(harness.origin.requests(to: "/liar.bin").count == 4)
        await harness.shutdown()
    }

    @Test("an endless run of answers that carry no bytes waits and gives up instead of hanging", arguments: [1, 4])
    func emptyAnswers(connections: Int) async throws {
        let harness = try await Harness.make {
            $0.retry.maxAttempts = 4
            $0.minimumSegmentSize = 128 * 1024
        }
        let size = 1024 * 1024
        let url = harness.origin.serve("/empty.bin", size: size)
        harness.origin.setFaults { $0.cutAtByte = 300_000 }
        let (_, error) = try await outcome(harness, url, connections: connections, limit: .seconds(120))
        let failure = try #require(error)
        #expect(failure.isTransient)
        #expect(failure.summary.contains("gave up after 4 attempts"), "\(failure)")
        #expect(harness.origin.requests(to: "/empty.bin").count < 20)
        await harness.shutdown()
    }
}

/// The codes of the `retrying` events of `id` seen so far.
func retryCodes(_ events: AsyncStream<DownloadEvent>, _ id: DownloadID) async -> [DownloadError.Code] {
    await collect(events, id) { change in
        if case .retrying(let error, _, _) = change { return error.code }
        return nil
    }
}

/// How many times `id` restarted from byte 0 so far.
func restartCount(_ events: AsyncStream<DownloadEvent>, _ id: DownloadID) async -> Int {
    await collect(events, id) { change in
        if case .restarted(let reason) = change { return reason }
        return nil
    }.count
}

/// What `pick` finds in the events of `id` delivered until the download ended (or the stream has nothing more).
private func collect<T>(
    _ events: AsyncStream<DownloadEvent>, _ id: DownloadID, _ pick: (DownloadEvent.Change) -> T?
) async -> [T] {
    var found: [T] = []
    for await event in events where event.id == id {
        if let value = pick(event.change) { found.append(value) }
        switch event.change {
        case .status(.completed), .status(.failed), .status(.removed): return found
        default: continue
        }
    }
    return found
}
