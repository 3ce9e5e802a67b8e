import Foundation
import HaulTestSupport
import NIOCore
import Testing

@testable import HaulKit

@Suite("Finishing queue")
struct FinishingQueueTests {
    /// A recorded download with a complete part file of `size` bytes, ready to finish.
    static func ready(
        _ name: String, size: Int, in directory: TemporaryDirectory, store: SQLiteDownloadStore
    ) async throws -> FinishingQueue.Request {
        let destination = directory.file(name).path
        let now = Date()
        var record = DownloadRecord(
            url: "http://example.com/\(name)", destinationPath: destination, options: DownloadOptions(),
            state: .running, createdAt: now, updatedAt: now)
        record = try await store.insert([record])[0]
        let file = try PartFile(path: destination + partFileSuffix, mode: .createNew)
        try file.write(ByteBuffer(repeating: 7, count: size), at: 0)
        record.transfer.hasPartData = true
        record.transfer.totalBytes = Int64(size)
        record.transfer.durableBytes = Int64(size)
        record.transfer.finalizing = true
        record.state = .completed
        record.completedAt = now
        return .init(
            contents: .file(file), record: record, partPath: destination + partFileSuffix, destination: destination)
    }

    /// A recorded download whose whole body of `size` bytes is held in memory, ready to finish.
    static func held(
        _ name: String, size: Int, in directory: TemporaryDirectory, store: SQLiteDownloadStore, fresh: Bool = true
    ) async throws -> FinishingQueue.Request {
        let destination = directory.file(name).path
        let now = Date()
        var record = DownloadRecord(
            url: "http://example.com/\(name)", options: DownloadOptions(), state: .running, createdAt: now,
            updatedAt: now)
        record = try await store.insert([record])[0]
        record.destinationPath = destination
        record.transfer.hasPartData = true
        record.transfer.totalBytes = Int64(size)
        record.state = .completed
        record.completedAt = now
        // In three buffers, as a body arrives: each is written after the one before.
        let cuts = [0, size / 3, size / 2, size]
        let body = (0..<3).map { ByteBuffer(bytes: TestContent.bytes(cuts[$0]..<cuts[$0 + 1])) }
        return .init(
            contents: .held(body, fresh: fresh), record: record, partPath: destination + partFileSuffix,
            destination: destination)
    }

    @Test("held bodies and part files finishing together: each is written, placed and recorded completed")
    func heldBodies() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteDownloadStore(path: directory.file("state/haul.sqlite").path)
        let queue = FinishingQueue(store: store)
        var requests: [FinishingQueue.Request] = []
        for index in 0..<20 {
            requests.append(try await Self.held("h\(index).bin", size: 100 * index, in: directory, store: store))
        }
        for index in 0..<5 {
            requests.append(try await Self.ready("f\(index).bin", size: 1_000 + index, in: directory, store: store))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in requests { group.addTask { try await queue.finish(request) } }
            try await group.waitForAll()
        }
        for request in requests {
            let size = Int(request.record.transfer.totalBytes ?? -1)
            let data = try #require(FileManager.default.contents(atPath: request.destination))
            if case .held = request.contents {
                #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            } else {
                #expect(data.count == size)
            }
            #expect(FileSystem.entry(at: request.partPath) == FileSystem.Entry.none)
            let stored = try #require(try await store.fetch(request.record.downloadID))
            #expect(stored.state == .completed)
            #expect(stored.destinationPath == request.destination)
            #expect(stored.transfer.hasPartData)
            close(request)
        }
        #expect(queue.groupCount < requests.count)
    }

    /// Finishes `good` and `bad` together: `good` ends in place (`size` bytes), `bad` fails and is never recorded
    /// completed. Returns `bad`'s stored record and its error.
    @discardableResult
    static func expectOnlyGoodPlaced(
        _ good: FinishingQueue.Request, _ bad: FinishingQueue.Request, size: Int64, store: SQLiteDownloadStore,
        listings: DirectoryListings = DirectoryListings()
    ) async throws -> (stored: DownloadRecord, error: DownloadError) {
        let queue = FinishingQueue(store: store, listings: listings)
        let placed = Task { try await queue.finish(good) }
        let refused = Task { try await queue.finish(bad) }
        _ = try await placed.value
        let error = try #require(await #expect(throws: DownloadError.self) { try await refused.value })
        #expect(FileSystem.entry(at: good.destination) == .regularFile(size: size))
        let stored = try #require(try await store.fetch(bad.record.downloadID))
        #expect(stored.state == .running, "never recorded completed")
        return (stored, error)
    }

    @Test(
        "a held body whose part file cannot be created fails alone; what is at its part path is not touched",
        arguments: [false, true])
    func heldBodyRefused(listed: Bool) async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteDownloadStore(path: directory.file("state/haul.sqlite").path)
        let good = try await Self.held("good.bin", size: 5_000, in: directory, store: store)
        let taken = try await Self.held("taken.bin", size: 5_000, in: directory, store: store)
        var listings = DirectoryListings()
        if listed {
            #if os(Linux)
            // Listed before the part file appears: only the listing's notices can show it.
            guard let listed = DirectoryListingsTests.listing(directory) else { return }
            listings = listed
            #else
            return
            #endif
        }
        // Another download created the part file at the same moment (its name was reserved fresh here).
        _ = FileManager.default.createFile(atPath: taken.partPath, contents: Data("theirs".utf8))
        let (stored, error) = try await Self.expectOnlyGoodPlaced(
            good, taken, size: 5_000, store: store, listings: listings)
        #expect(error.code == .destinationInUse)
        #expect(FileSystem.entry(at: taken.destination) == FileSystem.Entry.none)
        #expect(FileManager.default.contents(atPath: taken.partPath) == Data("theirs".utf8))
        #expect(stored.transfer.durableBytes == 0, "no byte of it is claimed synced")
    }

    @Test("a held body whose destination holds a file replaces it; an unnamed file is seen only once linked")
    func heldBodyReplaces() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteDownloadStore(path: directory.file("state/haul.sqlite").path)
        let request = try await Self.held("old.bin", size: 7_000, in: directory, store: store)
        _ = FileManager.default.createFile(atPath: request.destination, contents: Data("the old file".utf8))
        try await FinishingQueue(store: store).finish(request)
        let data = try #require(FileManager.default.contents(atPath: request.destination))
        #expect(TestContent.firstMismatch([UInt8](data), size: 7_000) == nil)
        #expect(FileSystem.entry(at: request.partPath) == FileSystem.Entry.none)

        #if os(Linux)
        let file = try #require(PartFile.unnamed(in: directory.url.path))
        defer { file.close() }
        try file.write(ByteBuffer(repeating: 1, count: 10), at: 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(throws: DownloadError.self) { try file.link(as: request.destination) }
        #expect(throws: DownloadError.self) { try file.linkThroughProc(as: request.destination) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == before)
        try file.link(as: directory.file("new.bin").path)
        #expect(FileSystem.entry(at: directory.file("new.bin").path) == .regularFile(size: 10))
        // Where linking the descriptor itself needs a privilege, the file is named through /proc.
        try file.linkThroughProc(as: directory.file("also.bin").path)
        #expect(FileSystem.entry(at: directory.file("also.bin").path) == .regularFile(size: 10))
        #endif
    }

    @Test("files finishing together share groups; each ends in place, recorded completed")
    func groups() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteDownloadStore(path: directory.file("state/haul.sqlite").path)
        let queue = FinishingQueue(store: store)
        var requests: [FinishingQueue.Request] = []
        for index in 0..<40 {
            requests.append(try await Self.ready("f\(index).bin", size: 1_000 + index, in: directory, store: store))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in requests { group.addTask { try await queue.finish(request) } }
            try await group.waitForAll()
        }
        for (index, request) in requests.enumerated() {
            #expect(FileSystem.entry(at: request.destination) == .regularFile(size: Int64(1_000 + index)))
            #expect(FileSystem.entry(at: request.partPath) == FileSystem.Entry.none)
            let stored = try #require(try await store.fetch(request.record.downloadID))
            #expect(stored.state == .completed)
            #expect(stored.transfer.finalizing)
            close(request)
        }
        #expect(queue.groupCount < requests.count, "files finishing at once share a commit and a directory sync")
    }

    @Test("a file that cannot be moved fails alone; the others in its group are placed")
    func oneFails() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteDownloadStore(path: directory.file("state/haul.sqlite").path)
        let good = try await Self.ready("good.bin", size: 10, in: directory, store: store)
        let bad = try await Self.ready("bad.bin", size: 10, in: directory, store: store)
        // A directory where the file should go: the rename cannot replace it.
        try FileManager.default.createDirectory(atPath: bad.destination, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: bad.destination + "/inside", contents: Data())
        let (_, error) = try await Self.expectOnlyGoodPlaced(good, bad, size: 10, store: store)
        #expect(error.code == .destinationNotWritable, "\(error)")
        #expect(error.summary.contains("a directory is in the way"))
        #expect(FileSystem.entry(at: bad.partPath) == .regularFile(size: 10), "its bytes are kept")
        close(good)
        close(bad)
    }

    @Test(
        "held bodies going to a directory not there yet: it is made and both placed; one whose directory cannot be made fails alone"
    )
    func heldBodyDirectories() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteDownloadStore(path: directory.file("state/haul.sqlite").path)
        let queue = FinishingQueue(store: store)
        let first = try await Self.held("new/sub/a.bin", size: 3_000, in: directory, store: store)
        let second = try await Self.held("new/sub/b.bin", size: 4_000, in: directory, store: store)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in [first, second] { group.addTask { try await queue.finish(request) } }
            try await group.waitForAll()
        }
        #expect(FileSystem.entry(at: first.destination) == .regularFile(size: 3_000))
        #expect(FileSystem.entry(at: second.destination) == .regularFile(size: 4_000))
        // A file where its directory should be.
        _ = FileManager.default.createFile(atPath: directory.file("blocked").path, contents: Data("a file".utf8))
        let good = try await Self.held("new/c.bin", size: 5_000, in: directory, store: store)
        let bad = try await Self.held("blocked/d.bin", size: 5_000, in: directory, store: store)
        let (stored, error) = try await Self.expectOnlyGoodPlaced(good, bad, size: 5_000, store: store)
        #expect(error.code == .destinationNotWritable, "\(error)")
        #expect(stored.transfer.durableBytes == 0)
        #expect(FileManager.default.contents(atPath: directory.file("blocked").path) == Data("a file".utf8))
    }

    func close(_ request: FinishingQueue.Request) {
        if case .file(let file) = request.contents { file.close() }
    }
}
