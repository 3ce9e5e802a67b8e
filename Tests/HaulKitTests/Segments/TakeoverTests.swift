import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// A download's own URL is one source among the file's: when it fails, from the first request on, a mirror takes
/// over; nothing is spliced.
@Suite("Mirrors that take over")
struct TakeoverTests {
    static let size = 3 * 1024 * 1024 + 77

    static func harness() async throws -> Harness {
        try await Harness.make { $0.minimumSegmentSize = 256 * 1024 }
    }

    /// Downloads `primary` with `mirrors`; returns how it ended, the mirrors dropped and the bytes by source.
    static func download(
        _ harness: Harness, _ primary: URL, mirrors: [URL], connections: Int
    ) async throws -> (result: Result<URL, DownloadError>, dropped: [URL], sources: [DownloadSourceBytes]) {
        let events = await harness.manager.events()
        let dropped = Mutex<[URL]>([])
        let sources = Mutex<[DownloadSourceBytes]>([])
        let collector = Task {
            for await event in events {
                if case .mirrorDropped(let url, _) = event.change { dropped.withLock { $0.append(url) } }
                if case .verified(_, let served) = event.change { sources.withLock { $0 = served } }
            }
        }
        let id = try await harness.manager.add(
            primary, options: .init(connections: connections, mirrors: mirrors))
        let result: Result<URL, DownloadError>
        do {
            result = .success(try await harness.manager.wait(for: id))
        } catch {
            result = .failure(error)
        }
        try await Task.sleep(for: .milliseconds(50))
        collector.cancel()
        return (result, dropped.withLock { $0 }, sources.withLock { $0 })
    }

    @Test("a primary that answers 404 to the first request: the mirror serves the whole file", arguments: [1, 4])
    func primaryMissing(connections: Int) async throws {
        let harness = try await Self.harness()
        let mirror = try await TestOrigin.start()
        mirror.serve("/file.bin", size: Self.size)
        let primary = harness.origin.url("/gone.bin")
        let (result, dropped, sources) = try await Self.download(
            harness, primary, mirrors: [mirror.url("/file.bin")], connections: connections)
        expectContent(try result.get(), size: Self.size)
        #expect(dropped == [primary])
        #expect(mirror.bodyBytesSent(to: "/file.bin") >= Self.size)
        #expect(sources.map(\.url) == [mirror.url("/file.bin")], "\(sources)")
        #expect(sources.map(\.bytes) == [Int64(Self.size)], "\(sources)")
        await harness.shutdown()
        await mirror.stop()
    }

    @Test("a primary that refuses connections: the mirror takes over", arguments: [1, 4])
    func primaryRefuses(connections: Int) async throws {
        let harness = try await Self.harness()
        let closed = try await TestOrigin.start()
        let primary = closed.url("/file.bin")
        await closed.stop()
        harness.origin.serve("/file.bin", size: Self.size)
        let (result, _, _) = try await Self.download(
            harness, primary, mirrors: [harness.origin.url("/file.bin")], connections: connections)
        expectContent(try result.get(), size: Self.size)
        await harness.shutdown()
    }

    @Test("the first mirror that is missing too is dropped; the next takes over; one of another length is not used")
    func nextSource() async throws {
        let harness = try await Self.harness()
        let good = try await TestOrigin.start()
        let other = try await TestOrigin.start()
        good.serve("/file.bin", size: Self.size)
        other.serve("/file.bin", size: Self.size + 1)
        good.setFaults { $0.bytesPerSecond = 8 * 1024 * 1024 }
        let (result, dropped, sources) = try await Self.download(
            harness, harness.origin.url("/gone.bin"),
            mirrors: [harness.origin.url("/also-gone.bin"), good.url("/file.bin"), other.url("/file.bin")],
            connections: 4)
        expectContent(try result.get(), size: Self.size)
        #expect(dropped.contains(harness.origin.url("/gone.bin")))
        #expect(dropped.contains(harness.origin.url("/also-gone.bin")))
        #expect(dropped.contains(other.url("/file.bin")), "\(dropped)")
        #expect(sources.allSatisfy { $0.url == good.url("/file.bin") }, "\(sources)")
        await harness.shutdown()
        await good.stop()
        await other.stop()
    }

    @Test("without a mirror, a 404 still fails the download")
    func noMirror() async throws {
        let harness = try await Self.harness()
        let (result, _, _) = try await Self.download(
            harness, harness.origin.url("/gone.bin"), mirrors: [], connections: 4)
        guard case .failure(let error) = result else {
            Issue.record("a 404 completed")
            return await harness.shutdown()
        }
        #expect(error.httpStatus == 404)
        await harness.shutdown()
    }
}
