import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// `-x auto` against the test origin: a server capping each connection, and an uncapped loopback one.
///
/// These compare speeds, which eight tests running beside them on two cores make meaningless (an uncapped download
/// beside them measured 14% of its speed alone): they run alone, on request, as a measurement
/// (`HAUL_TIMED_TESTS=1 swift test --filter AutoConnectionsTests`); `-x auto`'s decisions are checked in the suite by
/// `ConnectionTunerTests` and end to end by `PolitenessCommandTests`.
@Suite(
    "-x auto against real servers",
    .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["HAUL_TIMED_TESTS"] != nil,
        "speed comparisons run alone: HAUL_TIMED_TESTS=1 swift test --filter AutoConnectionsTests"))
struct AutoConnectionsTests {
    /// Downloads `size` bytes with `options`; returns the best speed over any second (bytes per second, sampled
    /// every 100 ms), when it was first reached, and the connection counts the `connections` events named.
    static func fetch(
        _ harness: Harness, _ path: String, size: Int, options: DownloadOptions
    ) async throws -> (best: Double, reachedAt: Duration, counts: [Int], elapsed: Duration) {
        let counts = Mutex<[Int]>([])
        let events = await harness.manager.events()
        let listener = Task {
            for await event in events {
                if case .connections(let count, _) = event.change { counts.withLock { $0.append(count) } }
            }
        }
        let started = ContinuousClock.now
        let id = try await harness.manager.add(harness.origin.serve(path, size: size), options: options)
        var samples: [(Duration, Int64)] = []
        var best = 0.0
        var reachedAt = Duration.zero
        while true {
            let snapshot = try #require(await harness.manager.snapshot(id))
            let now = started.duration(to: .now)
            samples.append((now, snapshot.receivedBytes))
            if let earlier = samples.last(where: { now - $0.0 >= .seconds(1) }) {
                let speed = Double(snapshot.receivedBytes - earlier.1) / (now - earlier.0).inSeconds
                if speed > best * 1.02 {
                    best = speed
                    reachedAt = now
                }
            }
            if snapshot.state == .completed || snapshot.state == .failed { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let elapsed = started.duration(to: .now)
        expectContent(try await harness.manager.wait(for: id), size: size)
        listener.cancel()
        return (best, reachedAt, counts.withLock { $0 }, elapsed)
    }

    @Test("each connection capped at 1 MiB/s: auto reaches 90% of the best fixed count's speed within 10 s")
    func cappedConnections() async throws {
        let harness = try await Harness.make {
            $0.maxConnectionsPerHost = 8
            $0.minimumSegmentSize = 256 * 1024
        }
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let size = 20 * 1024 * 1024
        let fixed = try await Self.fetch(harness, "/fixed.bin", size: size, options: .init(connections: 8))
        let auto = try await Self.fetch(
            harness, "/auto.bin", size: size, options: .init(connections: 8, adaptiveConnections: true))
        #expect(auto.counts.contains(8), "connection counts: \(auto.counts)")
        #expect(auto.best >= 0.9 * fixed.best, "auto \(auto.best / 1_048_576) MiB/s, -x 8 \(fixed.best / 1_048_576)")
        // About 4 s on a quiet machine (docs/politeness.md); the bound leaves room for a suite running beside it.
        #expect(auto.reachedAt <= .seconds(15), "reached after \(auto.reachedAt)")
        print(
            "capped 1 MiB/s per connection: -x 8 \(fixed.best / 1_048_576) MiB/s, auto \(auto.best / 1_048_576) MiB/s "
                + "reached at \(auto.reachedAt), counts \(auto.counts)")
        await harness.shutdown()
    }

    @Test("uncapped loopback: auto keeps at most two connections, at the speed of one")
    func uncapped() async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 256 * 1024 }
        let size = 32 * 1024 * 1024
        let one = try await Self.fetch(harness, "/one.bin", size: size, options: .init(connections: 1))
        let auto = try await Self.fetch(
            harness, "/auto.bin", size: size, options: .init(connections: 16, adaptiveConnections: true))
        #expect(auto.counts.allSatisfy { $0 <= 2 }, "connection counts: \(auto.counts)")
        let ratio = one.elapsed / auto.elapsed
        #expect(ratio >= 0.7, "auto took \(auto.elapsed), -x 1 \(one.elapsed)")
        print("uncapped loopback, 32 MiB: -x 1 \(one.elapsed), auto \(auto.elapsed), counts \(auto.counts)")
        await harness.shutdown()
    }
}
