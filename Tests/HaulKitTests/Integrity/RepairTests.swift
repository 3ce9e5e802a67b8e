import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

#if canImport(Glibc)
import Glibc
#endif

/// `repair`: a completed file with bad regions on disk is re-checked piece by piece and only the bad pieces are
/// fetched again; `verify` names them.
@Suite("Repairing completed files")
struct RepairTests {
    static let size = 64 * 1024 * 1024 + 5
    static let pieceLength = 64 * 1024

    @Test("ten corrupted regions of a 64 MiB file: repaired with at most 2% of it fetched, SHA-256 as recorded")
    func repairsOnlyBadPieces() async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/big.bin", size: Self.size)
        let text = TestContent.metalink(name: "big.bin", size: Self.size, urls: [url], pieceLength: Self.pieceLength)
        let file = try #require(try Metalink(parsing: Data(text.utf8)).files.first)
        let id = try await harness.manager.add(
            url, to: .file(harness.directory.file("big.bin")), options: file.options(DownloadOptions(connections: 4)))
        let saved = try await harness.manager.wait(for: id)
        let sentBefore = harness.origin.bodyBytesSent(to: "/big.bin")

        // Ten regions of 64 KiB, each across a piece boundary (so two pieces each), damaged on disk.
        let handle = try FileHandle(forUpdating: saved)
        for region in 0..<10 {
            let offset = UInt64(region * 6 * 1024 * 1024 + 32 * 1024)
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data(repeating: 0xEE, count: 64 * 1024))
        }
        try handle.close()

        let verified = try #require(try await harness.manager.verify([id]).first)
        #expect(verified.badPieces?.count == 20, "\(verified)")

        let report = try await harness.manager.repair(id)
        #expect(report.badPieces.count == 20)
        #expect(report.matchesRecordedSHA256 == true)
        let fetched = harness.origin.bodyBytesSent(to: "/big.bin") - sentBefore
        #expect(fetched == 20 * Self.pieceLength, "\(fetched)")
        #expect(Double(fetched) <= 0.02 * Double(Self.size))
        #expect(harness.origin.requests(to: "/big.bin").suffix(20).allSatisfy { $0.ifRange != nil })
        expectContent(saved, size: Self.size)
        #expect(try await harness.manager.verify([id]).first?.result == .matches)
        await harness.shutdown()
    }

    @Test("a server whose copy changed since is refused, not spliced; no piece hashes is a clear error")
    func refusals() async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/f.bin", size: 1_000_000)
        let text = TestContent.metalink(name: "f.bin", size: 1_000_000, urls: [url], pieceLength: 64 * 1024)
        let file = try #require(try Metalink(parsing: Data(text.utf8)).files.first)
        let id = try await harness.manager.add(
            url, to: .file(harness.directory.file("f.bin")), options: file.options(DownloadOptions()))
        let saved = try await harness.manager.wait(for: id)
        let handle = try FileHandle(forUpdating: saved)
        try handle.seek(toOffset: 100_000)
        try handle.write(contentsOf: Data(repeating: 0, count: 10))
        try handle.close()
        harness.origin.updateResource("/f.bin") { $0.version = 2 }
        await #expect(throws: DownloadError.self) { _ = try await harness.manager.repair(id) }
        let plain = try await harness.manager.add(
            harness.origin.url("/f.bin"), to: .file(harness.directory.file("g.bin")))
        _ = try await harness.manager.wait(for: plain)
        do {
            _ = try await harness.manager.repair(plain)
            Issue.record("repaired without piece hashes")
        } catch let error as DownloadError {
            #expect(error.summary.contains("no piece hashes"), "\(error)")
        }
        await harness.shutdown()
    }
}
