import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// ``DownloadManager/stream(_:options:progress:into:)``: a body delivered in order to a consumer, continued after a
/// cut, never spliced from two versions.
@Suite("Streaming to a consumer")
struct StreamTests {
    /// Streams `url` into memory; returns the bytes and what the stream ended with.
    static func stream(
        _ harness: Harness, _ url: URL, options: DownloadOptions = .init()
    ) async -> (bytes: [UInt8], result: Result<RemoteFile, any Error>) {
        let received = Mutex<[UInt8]>([])
        let result: Result<RemoteFile, any Error>
        do {
            result = .success(
                try await harness.manager.stream(url, options: options) { bytes in
                    received.withLock { $0.append(contentsOf: bytes) }
                })
        } catch {
            result = .failure(error)
        }
        return (received.withLock { $0 }, result)
    }

    @Test("the whole body arrives in order; nothing is recorded and no file is written")
    func wholeBody() async throws {
        let harness = try await Harness.make()
        let size = 1_500_001
        let url = harness.origin.serve("/s.bin", size: size)
        let (bytes, result) = await Self.stream(harness, url)
        let file = try result.get()
        #expect(file.size == Int64(size))
        #expect(TestContent.firstMismatch(bytes, size: size) == nil)
        #expect(await harness.manager.snapshots().isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: harness.directory.path).allSatisfy { $0 == "state" })
        await harness.shutdown()
    }

    @Test("a cut connection continues with Range from 64 KiB before the cut and If-Range; the bytes are exact")
    func cutResumes() async throws {
        let harness = try await Harness.make()
        let size = 2 * 1024 * 1024 + 3
        let url = harness.origin.serve("/cut.bin", size: size)
        harness.origin.setFaults {
            $0.cutAfter = 700_001
            $0.cutTimes = 1
        }
        let (bytes, result) = await Self.stream(harness, url)
        _ = try result.get()
        #expect(TestContent.firstMismatch(bytes, size: size) == nil)
        let requests = harness.origin.requests(to: "/cut.bin")
        #expect(requests.count == 2)
        #expect(requests[1].range == "bytes=\(700_001 - 64 * 1024)-")
        #expect(requests[1].ifRange == TestOrigin.Resource(size: size).etag)
        await harness.shutdown()
    }

    @Test("a stream whose body stalls is dropped after the stall timeout and continues; a speed limit is no stall")
    func stallResumes() async throws {
        let (harness, url) = try await Harness.stallingOnce(stallTimeout: .seconds(1.5))
        let size = 600_000
        let start = ContinuousClock.now
        let (bytes, result) = await Self.stream(harness, url)
        _ = try result.get()
        #expect(start.duration(to: .now) < .seconds(20), "the 30 s stall was waited out")
        #expect(TestContent.firstMismatch(bytes, size: size) == nil)
        let requests = harness.origin.requests(to: "/stall.bin")
        #expect(requests.count == 2)
        #expect(requests.last?.range == "bytes=\(250_000 - 64 * 1024)-")

        // 16 KiB/s: waits of more than the stall timeout between reads, none of them taken for a stall.
        let throttled = harness.origin.serve("/throttled.bin", size: 160 * 1024)
        let (slow, slowResult) = await Self.stream(harness, throttled, options: .init(speedLimit: 16 * 1024))
        _ = try slowResult.get()
        #expect(TestContent.firstMismatch(slow, size: 160 * 1024) == nil)
        #expect(harness.origin.requests(to: "/throttled.bin").count == 1)
        await harness.shutdown()
    }

    @Test("a server without ranges resends the file: the delivered bytes are skipped and the rest is exact")
    func withoutRanges() async throws {
        let harness = try await Harness.make()
        let size = 1024 * 1024
        let url = harness.origin.serve("/norange.bin", size: size)
        harness.origin.setFaults {
            $0.ignoresRange = true
            $0.cutAfter = 300_000
            $0.cutTimes = 1
        }
        let (bytes, result) = await Self.stream(harness, url)
        _ = try result.get()
        #expect(TestContent.firstMismatch(bytes, size: size) == nil)
        #expect(harness.origin.requests(to: "/norange.bin").map(\.status) == [200, 200])
        await harness.shutdown()
    }

    @Test("a file that changed after a cut ends the stream: a new ETag, or new bytes without validators")
    func changedIsNeverSpliced() async throws {
        for sendsValidators in [true, false] {
            let harness = try await Harness.make()
            var resource = TestOrigin.Resource(size: 1024 * 1024)
            resource.sendsValidators = sendsValidators
            let (bytes, result) = try await Self.streamChangedAfterCut(harness, "/v.bin", resource) { $0.version = 1 }
            Self.expectNeverSpliced(bytes, result)
            await harness.shutdown()
        }
    }

    /// Streams `path`, served as `resource`, whose first response stops after 400,000 bytes and closes 2 s later;
    /// meanwhile `change` alters the resource. Returns what the stream delivered and how it ended.
    static func streamChangedAfterCut(
        _ harness: Harness, _ path: String, _ resource: TestOrigin.Resource,
        change: (inout TestOrigin.Resource) -> Void
    ) async throws -> (bytes: [UInt8], result: Result<RemoteFile, any Error>) {
        let url = harness.origin.serve(path, resource)
        harness.origin.setFaults {
            $0.stallAfter = 400_000
            $0.stallDuration = .seconds(2)
            $0.stallTimes = 1
        }
        let streaming = Task { await Self.stream(harness, url) }
        let start = ContinuousClock.now
        while harness.origin.bodyBytesSent(to: path) < 400_000, start.duration(to: .now) < .seconds(20) {
            try await Task.sleep(for: .milliseconds(10))
        }
        harness.origin.updateResource(path, change)
        return await streaming.value
    }

    /// The stream ended with `resourceChanged`, saying the bytes cannot be taken back, and what it delivered is a
    /// prefix of the first version only.
    static func expectNeverSpliced(_ bytes: [UInt8], _ result: Result<RemoteFile, any Error>) {
        #expect(throws: DownloadError.self) { try result.get() }
        if case .failure(let error as DownloadError) = result {
            #expect(error.code == .resourceChanged, "\(error)")
            #expect(error.summary.contains("cannot be taken back"), "\(error)")
        }
        #expect(bytes.count <= 400_000)
        #expect(TestContent.firstMismatch(bytes, size: bytes.count) == nil)
    }

    @Test("a checksum is checked as the bytes pass; an error the consumer throws stops the stream unchanged")
    func checksumAndConsumerError() async throws {
        let harness = try await Harness.make()
        let size = 200_000
        let url = harness.origin.serve("/sum.bin", size: size)
        var options = DownloadOptions()
        options.checksum = try Checksum(.sha256, hex: TestContent.sha256(size: size))
        _ = try await Self.stream(harness, url, options: options).result.get()
        options.checksum = try Checksum(.sha256, hex: String(repeating: "0", count: 64))
        let mismatch = await Self.stream(harness, url, options: options).result
        #expect(throws: DownloadError.self) { try mismatch.get() }
        if case .failure(let error as DownloadError) = mismatch { #expect(error.code == .checksumMismatch) }

        struct Full: Error {}
        let before = harness.origin.requests(to: "/sum.bin").count
        await #expect(throws: Full.self) {
            _ = try await harness.manager.stream(url) { _ in throw Full() }
        }
        #expect(harness.origin.requests(to: "/sum.bin").count == before + 1, "a consumer's error is not retried")
        await harness.shutdown()
    }
}
