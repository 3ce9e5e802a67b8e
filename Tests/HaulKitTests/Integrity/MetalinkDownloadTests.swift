import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// A Metalink's file from three sources: the first down, one serving a corrupted piece; the file comes out exact,
/// the bad piece fetched once more from another source.
@Suite("Metalink downloads")
struct MetalinkDownloadTests {
    static let size = 3 * 1024 * 1024 + 77
    static let pieceLength = 256 * 1024
    /// Bytes served wrong by the corrupting source: inside piece 1.
    static let corrupted = 300_000..<300_016

    @Test("first source down, one corrupts a piece: exact, the piece fetched again from another", arguments: [1, 4])
    func threeSources(connections: Int) async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 256 * 1024 }
        let corrupting = try await TestOrigin.start()
        let good = try await TestOrigin.start()
        var bad = TestOrigin.Resource(size: Self.size)
        bad.corrupted = Self.corrupted
        corrupting.serve("/file.bin", bad)
        good.serve("/file.bin", size: Self.size)
        let down = harness.origin.url("/missing.bin")
        let text = TestContent.metalink(
            name: "file.bin", size: Self.size, urls: [down, corrupting.url("/file.bin"), good.url("/file.bin")],
            pieceLength: Self.pieceLength)
        let metalink = try Metalink(parsing: Data(text.utf8))
        let file = try #require(metalink.files.first)
        let id = try await harness.manager.add(
            try #require(file.sources.first).url, to: .file(harness.directory.file("file.bin")),
            options: file.options(DownloadOptions(connections: connections)))
        let saved = try await harness.manager.wait(for: id)
        expectContent(saved, size: Self.size)
        // Whether the corrupting source sent the corrupted bytes: with several connections the good source may serve
        // that part of the file first, and then no piece is bad. One connection takes the sources in order.
        let corruptedSent = corrupting.requests(to: "/file.bin").contains { request in
            let start = request.range.flatMap { Int($0.dropFirst("bytes=".count).prefix { $0 != "-" }) } ?? 0
            return start <= Self.corrupted.lowerBound && start + request.bodyBytesSent >= Self.corrupted.upperBound
        }
        #expect(connections > 1 || corruptedSent, "\(corrupting.requests.map(\.range))")
        let piece = "bytes=\(Self.pieceLength)-\(2 * Self.pieceLength - 1)"
        #expect(
            good.requests(to: "/file.bin").filter { $0.range == piece }.count == (corruptedSent ? 1 : 0),
            "\(good.requests.map(\.range))")
        let verification = try #require(await harness.manager.snapshot(id)?.verification)
        #expect(verification.checks.first?.source == .metalink, "\(verification)")
        #expect(verification.description.contains("pieces from the Metalink"), "\(verification)")
        await harness.shutdown()
        await corrupting.stop()
        await good.stop()
    }

    @Test("a piece no source sends right fails the download (checksumMismatch), never completes")
    func noGoodSource() async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 256 * 1024 }
        var bad = TestOrigin.Resource(size: Self.size)
        bad.corrupted = Self.corrupted
        harness.origin.serve("/file.bin", bad)
        let text = TestContent.metalink(
            name: "file.bin", size: Self.size, urls: [harness.origin.url("/file.bin")], pieceLength: Self.pieceLength)
        let file = try #require(try Metalink(parsing: Data(text.utf8)).files.first)
        let id = try await harness.manager.add(
            harness.origin.url("/file.bin"), to: .file(harness.directory.file("file.bin")),
            options: file.options(DownloadOptions(connections: 4)))
        do {
            _ = try await harness.manager.wait(for: id)
            Issue.record("a bad piece completed")
        } catch {
            #expect(error.code == .checksumMismatch)
            #expect(error.summary.contains("piece 1"), "\(error.summary)")
        }
        await harness.shutdown()
    }
}
