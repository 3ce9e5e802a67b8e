import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// Small files whose jobs hand their complete bodies off to the finishing queue and end: each download ends with its
/// finishing group, and one whose finishing fails goes on as a job of its own. At one connection per download and at
/// four (a small file uses one either way; the download's options must not change that).
@Suite("Small files handed off to the finishing queue")
struct HandOffTests {
    static let sizes = (0..<40).map { 1_000 + 499 * $0 }

    /// Adds `Self.sizes` small files under `/<prefix>/<n>.bin`, each with `connections`.
    static func addSmallFiles(_ harness: Harness, prefix: String, connections: Int) async throws -> [DownloadID] {
        try await harness.manager.add(
            contentsOf: sizes.enumerated().map {
                (
                    harness.origin.serve("/\(prefix)/\($0.offset).bin", size: $0.element), nil,
                    DownloadOptions(connections: connections)
                )
            })
    }

    static let slowSize = 48_000

    /// Adds a small file (``slowSize``) at `path` whose body takes seconds (the origin sends a second's worth at once,
    /// then paces the rest), and returns once it is under way, its name reserved as the response started: its id and
    /// its destination (`path`'s last component, in the harness directory).
    static func slowSmallFile(
        _ harness: Harness, _ path: String, connections: Int, existingFile: ExistingFilePolicy = .automatic
    ) async throws -> (DownloadID, URL) {
        harness.origin.setFaults { $0.bytesPerSecond = 12_000 }
        let id = try await harness.manager.add(
            harness.origin.serve(path, size: slowSize),
            options: DownloadOptions(connections: connections, existingFile: existingFile))
        try await harness.waitForProgress(id, atLeast: 1)
        return (id, harness.directory.file((path as NSString).lastPathComponent))
    }

    @Test(
        "each handed-off small file ends completed, byte-exact, with its last progress before its status",
        arguments: [1, 4])
    func handedOffEnds(connections: Int) async throws {
        let harness = try await Harness.make { $0.maxConcurrentDownloads = 8 }
        let events = await harness.manager.events()
        let ids = try await Self.addSmallFiles(harness, prefix: "ends", connections: connections)
        var lastProgress: [DownloadID: Int64] = [:]
        var completedAfter: [DownloadID: Int64] = [:]
        for await event in events {
            switch event.change {
            case .progress(let progress): lastProgress[event.id] = progress.receivedBytes
            case .status(.completed): completedAfter[event.id] = lastProgress[event.id] ?? -1
            default: break
            }
            if completedAfter.count == ids.count { break }
        }
        for (id, size) in zip(ids, Self.sizes) {
            #expect(completedAfter[id] == Int64(size), "download \(id): its size shown before it completed")
            expectContent(try await harness.manager.wait(for: id), size: size)
        }
        #expect(harness.manager.finishing.handOffCount == ids.count, "every job ended at its hand-off")
        #expect(!harness.directory.entries().contains { $0.hasSuffix(".part") })
        await harness.shutdown()
        let reopened = try await harness.reopen()
        #expect(await reopened.manager.count(in: [.completed]) == ids.count)
        await reopened.shutdown()
    }

    @Test(
        "a file put at a small file's name while its body arrives is left as it is (the download fails, and completes once it is moved away); with replace it is replaced, and the file in place is not taken for changed since",
        arguments: [1, 4])
    func fileAtNameWhileHeld(connections: Int) async throws {
        let harness = try await Harness.make { $0.maxConcurrentDownloads = 2 }
        // The other file comes well before the body is complete.
        let (kept, keptAt) = try await Self.slowSmallFile(harness, "/kept/late.bin", connections: connections)
        try Data("someone else's".utf8).write(to: keptAt)
        try await harness.waitForState(kept, .failed)
        #expect(await harness.manager.snapshot(kept)?.lastError?.code == .destinationInUse)
        #expect(try Data(contentsOf: keptAt) == Data("someone else's".utf8))
        try FileManager.default.removeItem(at: keptAt)
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        try await harness.manager.resume(kept)
        expectContent(try await harness.manager.wait(for: kept), size: Self.slowSize)

        let (id, destination) = try await Self.slowSmallFile(
            harness, "/raced/late.bin", connections: connections, existingFile: .replace)
        try Data("someone else's".utf8).write(to: destination)
        expectContent(try await harness.manager.wait(for: id), size: Self.slowSize)
        let snapshot = try #require(await harness.manager.snapshot(id))
        #expect(snapshot.fileChange == nil, "the file in place is the one recorded: \(snapshot.fileChange ?? "")")
        #expect(await harness.manager.checkCompletedFile(id) == .complete)
        await harness.shutdown()
    }

    @Test(
        "a handed-off file whose finishing fails goes on as a job: a directory in its place fails it clearly, and once moved away it completes",
        arguments: [1, 4])
    func failedFinishingHandedOver(connections: Int) async throws {
        let harness = try await Harness.make { $0.maxConcurrentDownloads = 2 }
        // The directory comes well before the body is complete.
        let (id, destination) = try await Self.slowSmallFile(harness, "/taken/late.bin", connections: connections)
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        try Data("someone else's".utf8).write(to: destination.appendingPathComponent("note.txt"))
        try await harness.waitForState(id, .failed)
        #expect(harness.manager.finishing.handOffCount == 1)
        let failed = try #require(await harness.manager.snapshot(id))
        #expect(failed.lastError?.code == .destinationNotWritable, "\(String(describing: failed.lastError))")
        #expect(FileManager.default.contents(atPath: destination.appendingPathComponent("note.txt").path) != nil)

        try FileManager.default.removeItem(at: destination)
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        try await harness.manager.resume(id)
        expectContent(try await harness.manager.wait(for: id), size: Self.slowSize)
        #expect(harness.directory.entries().filter { $0.hasPrefix("late") } == ["late.bin"])
        await harness.shutdown()
    }

    @Test(
        "paused or shut down while small files finish: each ends completed byte-exact, or stopped and completes byte-exact after",
        arguments: [1, 4], [false, true])
    func stoppedWhileFinishing(connections: Int, shutsDown: Bool) async throws {
        var harness = try await Harness.make { $0.maxConcurrentDownloads = 8 }
        let ids = try await Self.addSmallFiles(harness, prefix: "stop", connections: connections)
        let start = ContinuousClock.now
        while await harness.manager.count(in: [.completed]) < 4 {
            guard ContinuousClock.now - start < .seconds(20) else { throw HarnessTimeout(what: "four completed") }
            try await Task.sleep(for: .milliseconds(2))
        }
        if shutsDown {
            await harness.manager.shutdown()
        } else {
            await harness.manager.pauseAll()
        }
        // Stopped: nothing runs or finishes any more, and what is completed is in place.
        let stopped = shutsDown ? [] : await harness.manager.snapshots()
        for snapshot in stopped {
            #expect([.completed, .paused].contains(snapshot.state), "\(snapshot.id): \(snapshot.state)")
            if snapshot.state == .completed, let index = ids.firstIndex(of: snapshot.id) {
                expectContent(harness.directory.file("\(index).bin"), size: Self.sizes[index])
            }
        }
        if shutsDown {
            harness = try await harness.reopen()
        } else {
            await harness.manager.resumeAll()
        }
        for (id, size) in zip(ids, Self.sizes) {
            expectContent(try await harness.manager.wait(for: id), size: size)
        }
        #expect(!harness.directory.entries().contains { $0.hasSuffix(".part") })
        await harness.shutdown()
    }
}
