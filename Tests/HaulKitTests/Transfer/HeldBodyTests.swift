import Foundation
import HaulTestSupport
import NIOCore
import Testing

@testable import HaulKit

@Suite("Small files held in memory")
struct HeldBodyTests {
    static let size = 200_000

    /// `bytes=N-`, for a range `bytes=N-` or `bytes=N-M`.
    static func rangeStart(_ range: String) -> String { String(range.prefix { $0 != "-" }) + "-" }

    @Test("the buffers a body arrives in are kept as they are, unless their storage is much larger than their bytes")
    func keepsBuffers() throws {
        let body = HeldBody()
        let bytes = TestContent.bytes(0..<30_000)
        let first = ByteBuffer(bytes: bytes[0..<16_384])
        // 1,000 bytes read into a 64 KiB buffer: copied, so the 64 KiB are not kept for them.
        var roomy = ByteBufferAllocator().buffer(capacity: 65_536)
        roomy.writeBytes(bytes[16_384..<17_384])
        let last = ByteBuffer(bytes: bytes[17_384..<30_000])
        try body.write(first, at: 0)
        try body.write(roomy, at: 16_384)
        try body.write(ByteBuffer(), at: 17_384)
        try body.write(last, at: 17_384)
        #expect(throws: DownloadError.self) { try body.write(last, at: 17_384) }

        let chunks = body.chunks
        #expect(chunks.count == 3 && body.count == 30_000)
        #expect(chunks[0].storageCapacity == first.storageCapacity)
        #expect(chunks[1].storageCapacity < 4096 && chunks[1].readableBytesView.elementsEqual(bytes[16_384..<17_384]))
        #expect(chunks.flatMap { Array($0.readableBytesView) } == bytes)

        var read: [UInt8] = [1, 2, 3]
        #expect(try body.read(into: &read, count: 2_000, at: 16_000) == 2_000)
        #expect(read == Array(bytes[16_000..<18_000]))
        #expect(try body.read(into: &read, count: 5_000, at: 29_000) == 1_000)
        #expect(read == Array(bytes[29_000..<30_000]))
        #expect(try body.read(into: &read, count: 10, at: 30_000) == 0 && read.isEmpty)
    }

    @Test(
        "a small file is held until it is complete: no part file and nothing committed while it arrives",
        arguments: [1, 4])
    func heldUntilComplete(connections: Int) async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/small.bin", size: Self.size)
        harness.origin.setFaults { $0.bytesPerSecond = 200_000 }
        let id = try await harness.manager.add(url, options: .init(connections: connections))
        try await harness.waitForProgress(id, atLeast: 40_000)
        let part = harness.directory.file("small.bin.part").path
        #expect(!FileManager.default.fileExists(atPath: part))
        let arriving = try #require(try await harness.manager.store.fetch(id))
        #expect(!arriving.transfer.hasPartData && arriving.destinationPath == nil)

        let file = try await harness.manager.wait(for: id)
        expectContent(file, size: Self.size)
        #expect(!FileManager.default.fileExists(atPath: part))
        #expect(harness.origin.requests(to: "/small.bin").count == 1)
        let stored = try #require(try await harness.manager.store.fetch(id))
        #expect(stored.state == .completed && stored.destinationPath == file.path)
        #expect(stored.transfer.totalBytes == Int64(Self.size))
        await harness.shutdown()
    }

    @Test(
        "a small file cut mid-body continues from the bytes it had: they went to its part file first",
        arguments: [1, 4])
    func cutContinues(connections: Int) async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/cut.bin", size: Self.size)
        harness.origin.setFaults {
            $0.cutAfter = 60_000
            $0.cutTimes = 1
        }
        let id = try await harness.manager.add(url, options: .init(connections: connections))
        expectContent(try await harness.manager.wait(for: id), size: Self.size)
        let requests = harness.origin.requests(to: "/cut.bin")
        // With several connections allowed, a request's range is bounded (its first segment): where it starts counts.
        #expect(requests.map { $0.range.map(Self.rangeStart) } == ["bytes=0-", "bytes=60000-"])
        #expect(requests.last?.ifRange == TestOrigin.Resource(size: Self.size).etag)
        await harness.shutdown()
    }

    @Test(
        "a body without a length, small or past the limit, goes to its part file as it comes; cut mid-way, it continues byte-exact",
        arguments: [1, 4])
    func unknownLengthCutContinues(connections: Int) async throws {
        let harness = try await Harness.make()
        for size in [100_000, 600_000] {
            var resource = TestOrigin.Resource(size: size)
            resource.chunked = true
            let url = harness.origin.serve("/chunked-\(size).bin", resource)
            harness.origin.setFaults {
                $0.cutAfter = 80_000
                $0.cutTimes = 1
            }
            let id = try await harness.manager.add(url, options: .init(connections: connections))
            expectContent(try await harness.manager.wait(for: id), size: size)
            let requests = harness.origin.requests(to: url.path)
            #expect(requests.count == 2, "\(size)")
            // The cut body's bytes were in its part file: the second request asks for the rest, as of that file.
            let resumed = try #require(requests.last?.range.map(Self.rangeStart), "\(size)")
            #expect(resumed != "bytes=0-", "\(size)")
            #expect(requests.last?.ifRange == resource.etag, "\(size)")
        }
        await harness.shutdown()
    }

    @Test(
        "in a batch of small files, those that fail end failed with their error and their bytes kept; the others complete byte-exact",
        arguments: [1, 4])
    func failuresInABatch(connections: Int) async throws {
        let harness = try await Harness.make { $0.retry.maxAttempts = 3 }
        let sizes = (0..<16).map { 1_000 + 9_000 * $0 }
        var files = sizes.enumerated().map { ("/ok\($0.offset).bin", $0.element) }
        // Every response stops at byte 150,000 of its file: only this one is larger, and it never completes.
        files.insert(("/short.bin", Self.size), at: 5)
        harness.origin.setFaults { $0.cutAtByte = 150_000 }
        harness.origin.respond("/missing.bin", status: 404)
        let urls = files.map { harness.origin.serve($0.0, size: $0.1) } + [harness.origin.url("/missing.bin")]
        let ids = try await harness.manager.add(
            contentsOf: urls.map { ($0, nil, DownloadOptions(connections: connections)) })
        for (id, file) in zip(ids, files) where file.0 != "/short.bin" {
            expectContent(try await harness.manager.wait(for: id), size: file.1)
        }
        let missing = try #require(ids.last)
        await #expect(throws: DownloadError.self) { try await harness.manager.wait(for: missing) }
        #expect(await harness.manager.snapshot(missing)?.lastError?.httpStatus == 404)
        let short = ids[5]
        await #expect(throws: DownloadError.self) { try await harness.manager.wait(for: short) }
        #expect(await harness.manager.snapshot(short)?.state == .failed)
        // What it received is in its recorded part file, for a resume.
        let part = harness.directory.file("short.bin.part")
        #expect(FileSystem.entry(at: part.path) == .regularFile(size: 150_000))
        expectPrefix(part, count: 150_000)
        let stored = try #require(try await harness.manager.store.fetch(short))
        #expect(stored.state == .failed && stored.transfer.hasPartData && stored.transfer.durableBytes == 150_000)
        #expect(!FileManager.default.fileExists(atPath: harness.directory.file("short.bin").path))
        #expect(!FileManager.default.fileExists(atPath: harness.directory.file("missing.bin").path))
        await harness.shutdown()
    }

    @Test("a small file paused mid-body keeps its bytes in a recorded, synced part file", arguments: [1, 4])
    func pauseKeepsBytes(connections: Int) async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/paused.bin", size: Self.size)
        harness.origin.setFaults { $0.stallAfter = 150_000 }
        let id = try await harness.manager.add(url, options: .init(connections: connections))
        try await harness.waitForProgress(id, atLeast: 150_000)
        try await harness.manager.pause(id)
        try await harness.waitForState(id, .paused)
        let part = harness.directory.file("paused.bin.part")
        #expect(FileSystem.entry(at: part.path) == .regularFile(size: 150_000))
        expectPrefix(part, count: 150_000)
        let stored = try #require(try await harness.manager.store.fetch(id))
        #expect(stored.transfer.hasPartData && stored.destinationPath == harness.directory.file("paused.bin").path)
        #expect(stored.transfer.durableBytes == 150_000)

        harness.origin.setFaults { $0.stallAfter = nil }
        try await harness.manager.resume(id)
        expectContent(try await harness.manager.wait(for: id), size: Self.size)
        let resumed = try #require(harness.origin.requests(to: "/paused.bin").last)
        #expect(resumed.range.map(Self.rangeStart) == "bytes=\(150_000 - 64 * 1024)-")
        #expect(resumed.ifRange == TestOrigin.Resource(size: Self.size).etag)
        await harness.shutdown()
    }

    @Test("a small file renamed into place whose completion was not recorded is fetched again after a restart")
    func completionNotRecorded() async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/placed.bin", size: Self.size)
        let id = try await harness.manager.add(url)
        let file = try await harness.manager.wait(for: id)
        await harness.manager.shutdown()
        // Put the world back to "renamed and its directory synced, not yet recorded completed".
        let store = try SQLiteDownloadStore(path: harness.directory.file("state/haul.sqlite").path)
        var record = try #require(try await store.fetch(id))
        record.state = .running
        try await store.saveLifecycle(record)

        let reopened = try await harness.reopen()
        #expect(try await reopened.manager.wait(for: id) == file)
        expectContent(file, size: Self.size)
        #expect(harness.origin.requests(to: "/placed.bin").count == 2)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".part"))
        await reopened.shutdown()
    }

    @Test("files above the limit, with a checksum, or split over connections go to a part file as they arrive")
    func notHeld() async throws {
        let harness = try await Harness.make()
        let above = harness.origin.serve("/above.bin", size: 300 * 1024)
        let summed = harness.origin.serve("/summed.bin", size: Self.size)
        harness.origin.setFaults {
            $0.stallAfter = 40_000
            $0.stallDuration = .seconds(1)
            $0.stallTimes = 2
        }
        let digest = TestContent.bytes(0..<Self.size).withUnsafeBytes {
            DigestHasher.hex(DigestHasher.digest(DigestAlgorithm(.sha256), of: $0))
        }
        let sum = try Checksum(.sha256, hex: digest)
        let ids = [
            try await harness.manager.add(above),
            try await harness.manager.add(summed, options: .init(checksum: sum)),
        ]
        for (id, name) in zip(ids, ["above.bin", "summed.bin"]) {
            try await harness.waitForProgress(id, atLeast: 40_000)
            #expect(FileManager.default.fileExists(atPath: harness.directory.file(name + ".part").path), "\(name)")
        }
        expectContent(try await harness.manager.wait(for: ids[0]), size: 300 * 1024)
        expectContent(try await harness.manager.wait(for: ids[1]), size: Self.size)
        await harness.shutdown()
    }
}

/// Checks that the file at `url` starts with `count` bytes of test content.
private func expectPrefix(_ url: URL, count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
    let data = FileManager.default.contents(atPath: url.path) ?? Data()
    #expect(
        data.count >= count && [UInt8](data.prefix(count)) == TestContent.bytes(0..<count),
        sourceLocation: sourceLocation)
}
