import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// A stream runs on the download's engine (``StreamRun``: the transfer machine, the retrier, the body writer): what
/// that engine watches applies to it too.
@Suite("Streaming on the download engine")
struct StreamEngineTests {
    /// Streams `url` into memory, cancelled after `limit`; returns the bytes and what the stream ended with.
    static func stream(
        _ harness: Harness, _ url: URL, options: DownloadOptions = .init(), limit: Duration = .seconds(60)
    ) async -> (bytes: [UInt8], result: Result<RemoteFile, any Error>) {
        let streaming = Task { await StreamTests.stream(harness, url, options: options) }
        let watchdog = Task {
            try await Task.sleep(for: limit)
            streaming.cancel()
        }
        defer { watchdog.cancel() }
        return await streaming.value
    }

    @Test("a response that falls to a trickle is dropped below the lowest speed and resumed; the bytes are exact")
    func trickleIsDropped() async throws {
        let harness = try await Harness.make {
            $0.lowestSpeed = 1024
            $0.lowSpeedWindow = .seconds(1)
        }
        let size = 1024 * 1024 + 7
        let url = harness.origin.serve("/trickle.bin", size: size)
        // 128 bytes a second never stalls (15 s here): only the lowest-speed watch drops it.
        harness.origin.setFaults {
            $0.trickle = (after: size / 5, bytesPerSecond: 128)
            $0.trickleTimes = 1
        }
        let start = ContinuousClock.now
        let (bytes, result) = await Self.stream(harness, url, limit: .seconds(40))
        _ = try result.get()
        #expect(start.duration(to: .now) < .seconds(30), "the trickle was waited out")
        #expect(bytes.count == size)
        #expect(TestContent.firstMismatch(bytes, size: size) == nil)
        let requests = harness.origin.requests(to: "/trickle.bin")
        #expect(requests.count == 2, "\(requests.map(\.range))")
        // The trickling response was abandoned: it sent little past the point where it slowed down.
        #expect(requests[0].bodyBytesSent < size / 5 + 64 * 1024, "\(requests[0].bodyBytesSent)")
        // The fresh one resumed where the trickle began (a few trickled bytes count), less the compared overlap, on
        // the same version.
        let resumedAt = try #require(requests.last?.range.flatMap { Int($0.dropFirst(6).prefix { $0 != "-" }) })
        #expect((size / 5..<size / 5 + 4096).contains(resumedAt + 64 * 1024), "\(resumedAt)")
        #expect(requests.last?.ifRange == TestOrigin.Resource(size: size).etag)
        await harness.shutdown()
    }

    /// A speed measured against the clock, with a margin of two (16 KiB/s against 32): beside the whole suite a
    /// starved process reads slower than its limit (a CI rehearsal's run took 198 s for 6 s of body and dropped the
    /// response once), so it runs alone with `HAUL_ISOLATED=1`, in a test process of its own (`.ci/run` does).
    @Test(
        "a speed limit under the lowest speed is not taken for a trickle",
        .enabled(
            if: ProcessInfo.processInfo.environment["HAUL_ISOLATED"] == "1",
            "measures a speed against the clock, so it runs alone with HAUL_ISOLATED=1 (.ci/run does)"))
    func limitIsNotATrickle() async throws {
        let harness = try await Harness.make {
            $0.lowestSpeed = 32 * 1024
            // Three windows at the limited speed, each long enough that a loaded machine's pause is not a trickle.
            $0.lowSpeedWindow = .seconds(2)
        }
        let size = 96 * 1024
        let url = harness.origin.serve("/limited.bin", size: size)
        let (bytes, result) = await Self.stream(harness, url, options: .init(speedLimit: 16 * 1024))
        _ = try result.get()
        #expect(TestContent.firstMismatch(bytes, size: size) == nil)
        #expect(harness.origin.requests(to: "/limited.bin").count == 1)
        await harness.shutdown()
    }

    @Test(
        "a consumer that holds the bytes up (a pipe's slow reader) is not a slow server: nothing is dropped",
        .enabled(
            if: ProcessInfo.processInfo.environment["HAUL_ISOLATED"] == "1",
            "measures a speed against the clock, so it runs alone with HAUL_ISOLATED=1 (.ci/run does)"))
    func slowConsumerIsNotATrickle() async throws {
        let harness = try await Harness.make {
            $0.lowestSpeed = 64 * 1024
            $0.lowSpeedWindow = .seconds(2)
        }
        let size = 512 * 1024
        let url = harness.origin.serve("/reader.bin", size: size)
        let received = Mutex<[UInt8]>([])
        let writes = Atomic<Int>(0)
        _ = try await harness.manager.stream(url) { bytes in
            // 2.5 s held up at the first write (at most two reads of 64 KiB by then): far below 64 KiB/s, were it
            // the server's.
            if writes.add(1, ordering: .relaxed).newValue == 1 { usleep(2_500_000) }
            received.withLock { $0.append(contentsOf: bytes) }
        }
        #expect(TestContent.firstMismatch(received.withLock { $0 }, size: size) == nil)
        #expect(harness.origin.requests(to: "/reader.bin").count == 1)
        await harness.shutdown()
    }

    @Test("the server's digest of the whole file is checked as the bytes pass, also across a cut")
    func serverDigest() async throws {
        let harness = try await Harness.make()
        let size = 700_000
        var resource = TestOrigin.Resource(size: size)
        resource.digests = [.init(.reprDigest)]
        let right = harness.origin.serve("/right.bin", resource)
        harness.origin.setFaults {
            $0.cutAfter = 300_000
            $0.cutTimes = 1
        }
        let (bytes, result) = await Self.stream(harness, right)
        _ = try result.get()
        #expect(TestContent.firstMismatch(bytes, size: size) == nil)
        #expect(harness.origin.requests(to: "/right.bin").count == 2)

        // Damaged bytes under the right digest: delivered, then the stream fails (the consumer discards them).
        resource.corrupted = 400_000..<400_100
        let damaged = harness.origin.serve("/damaged.bin", resource)
        let failed = await Self.stream(harness, damaged).result
        #expect(throws: DownloadError.self) { try failed.get() }
        if case .failure(let error as DownloadError) = failed {
            #expect(error.code == .serverDigestMismatch, "\(error)")
            #expect(error.summary.contains("Repr-Digest"), "\(error)")
        }
        #expect(harness.origin.requests(to: "/damaged.bin").count == 1, "delivered bytes are not fetched again")

        // Unless the digests are ignored.
        _ = try await Self.stream(harness, damaged, options: .init(serverDigests: .ignore)).result.get()
        await harness.shutdown()
    }

    @Test("a changed digest after a cut ends the stream: never spliced from two versions")
    func changedDigestIsNeverSpliced() async throws {
        let harness = try await Harness.make()
        var resource = TestOrigin.Resource(size: 1024 * 1024)
        resource.digests = [.init(.reprDigest)]
        resource.sendsValidators = false
        // The same bytes, another digest of the whole file: only the digest tells.
        let (bytes, result) = try await StreamTests.streamChangedAfterCut(harness, "/d.bin", resource) {
            $0.digests = [.init(.reprDigest, wrong: true)]
        }
        StreamTests.expectNeverSpliced(bytes, result)
        await harness.shutdown()
    }
}
