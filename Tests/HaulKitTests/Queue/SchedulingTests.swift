import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

@Suite("Scheduling and control")
struct SchedulingTests {
    /// The most downloads shown running at once, until `count` have completed or failed.
    static func peakRunning(_ events: AsyncStream<DownloadEvent>, until count: Int) async -> Int {
        var running = Set<DownloadID>()
        var peak = 0
        var ended = 0
        for await event in events {
            switch event.change {
            case .status(.running): running.insert(event.id)
            case .status(.completed), .status(.failed):
                running.remove(event.id)
                ended += 1
            default: break
            }
            peak = max(peak, running.count)
            if ended == count { break }
        }
        return peak
    }

    @Test("at most N downloads transfer at once, and all complete")
    func concurrencyLimit() async throws {
        let harness = try await Harness.make(inMemory: true) { $0.maxConcurrentDownloads = 2 }
        harness.origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 }
        let events = await harness.manager.events()
        var ids: [DownloadID] = []
        for index in 0..<6 {
            ids.append(try await harness.manager.add(harness.origin.serve("/many/\(index).bin", size: 300_000 + index)))
        }
        let peak = await Self.peakRunning(events, until: ids.count)
        #expect(harness.origin.peakResponses == 2, "\(harness.origin.peakResponses) responses at once")
        // One finishing its file (synced, put in place) gives its slot to the next: it may still show running.
        #expect(peak >= 2 && peak <= 2 + 8)
        for (index, id) in ids.enumerated() {
            expectContent(try await harness.manager.wait(for: id), size: 300_000 + index)
        }
        await harness.shutdown()
    }

    @Test("a download finishing its file gives its slot to the next: it runs before the first completes")
    func finishingGivesSlot() async throws {
        let harness = try await Harness.make(inMemory: true) { $0.maxConcurrentDownloads = 1 }
        let events = await harness.manager.events()
        let sizes = [10_000, 20_000, 30_000]
        let ids = try await harness.manager.add(
            contentsOf: sizes.enumerated().map {
                (harness.origin.serve("/next/\($0.offset).bin", size: $0.element), nil, .init())
            })
        let peak = await Self.peakRunning(events, until: ids.count)
        #expect(peak >= 2, "the second started only once the first was in place")
        #expect(harness.origin.peakResponses == 1, "one slot: one response at a time")
        for (id, size) in zip(ids, sizes) {
            expectContent(try await harness.manager.wait(for: id), size: size)
        }
        await harness.shutdown()
    }

    @Test("many small files finishing together share commits and directory syncs, and all land byte-exact")
    func groupFinishing() async throws {
        let harness = try await Harness.make { $0.maxConcurrentDownloads = 16 }
        let sizes = (0..<48).map { 4_096 + $0 * 97 }
        let ids = try await harness.manager.add(
            contentsOf: sizes.enumerated().map {
                (harness.origin.serve("/small/\($0.offset).bin", size: $0.element), nil, .init())
            })
        for (id, size) in zip(ids, sizes) {
            expectContent(try await harness.manager.wait(for: id), size: size)
        }
        let groups = harness.manager.finishing.groupCount
        #expect(groups >= 1 && groups < sizes.count, "\(groups) groups for \(sizes.count) files")
        #expect(!harness.directory.entries().contains { $0.hasSuffix(".part") })
        await harness.shutdown()
        let reopened = try await harness.reopen()
        #expect(await reopened.manager.count(in: [.completed]) == sizes.count)
        await reopened.shutdown()
    }

    @Test("higher priority starts first; a paused download frees its slot")
    func priorityAndSlots() async throws {
        let harness = try await Harness.make(inMemory: true) { $0.maxConcurrentDownloads = 1 }
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let events = await harness.manager.events()
        let first = try await harness.manager.add(harness.origin.serve("/first.bin", size: 2_000_000))
        let low = try await harness.manager.add(harness.origin.serve("/low.bin", size: 1000))
        let high = try await harness.manager.add(
            harness.origin.serve("/high.bin", size: 1000), options: .init(priority: 5))
        try await harness.waitForProgress(first, atLeast: 1)
        #expect(await harness.manager.snapshot(low)?.state == .queued)
        try await harness.manager.pause(first)
        _ = try await harness.manager.wait(for: low)
        _ = try await harness.manager.wait(for: high)
        var started: [DownloadID] = []
        for await event in events {
            if case .status(.running) = event.change { started.append(event.id) }
            if started.count == 3 { break }
        }
        #expect(started == [first, high, low])
        #expect(await harness.manager.snapshot(first)?.state == .paused)
        await harness.shutdown()
    }

    @Test("pauseAll and resumeAll")
    func pauseAllResumeAll() async throws {
        let harness = try await Harness.make(inMemory: true) { $0.maxConcurrentDownloads = 2 }
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        var ids: [DownloadID] = []
        for index in 0..<3 {
            ids.append(try await harness.manager.add(harness.origin.serve("/all\(index)", size: 1_500_000)))
        }
        try await harness.waitForProgress(ids[0], atLeast: 1)
        await harness.manager.pauseAll()
        #expect(await harness.manager.snapshots(in: [.paused]).count == 3)
        #expect(await harness.manager.snapshots(in: [.running, .queued]).isEmpty)
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        await harness.manager.resumeAll()
        for id in ids { expectContent(try await harness.manager.wait(for: id), size: 1_500_000) }
        await harness.shutdown()
    }

    @Test("cancel stops and deletes the partial data; remove can delete the finished file")
    func cancelAndRemove() async throws {
        let harness = try await Harness.make(inMemory: true)
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let slow = try await harness.manager.add(harness.origin.serve("/cancel.bin", size: 3_000_000))
        try await harness.waitForProgress(slow, atLeast: 100_000)
        try await harness.manager.cancel(slow)
        #expect(await harness.manager.snapshot(slow) == nil)
        #expect(!FileManager.default.fileExists(atPath: harness.directory.file("cancel.bin.part").path))

        harness.origin.setFaults { $0.bytesPerSecond = nil }
        let done = try await harness.manager.add(harness.origin.serve("/keep.bin", size: 1000))
        let file = try await harness.manager.wait(for: done)
        try await harness.manager.remove(done)
        #expect(FileManager.default.fileExists(atPath: file.path))
        let again = try await harness.manager.add(harness.origin.serve("/delete.bin", size: 1000))
        let deleted = try await harness.manager.wait(for: again)
        try await harness.manager.remove(again, deletingFile: true)
        #expect(!FileManager.default.fileExists(atPath: deleted.path))
        #expect(await harness.manager.snapshots().isEmpty)
        await #expect(throws: DownloadError.unknownDownload(again)) { try await harness.manager.pause(again) }
        await harness.manager.removeAll()
        await harness.shutdown()
    }

    @Test("remove --delete-file never deletes a file that changed since Haul put it there, nor what replaced it")
    func removeKeepsChangedFiles() async throws {
        let harness = try await Harness.make(inMemory: true)
        var ids: [DownloadID] = []
        for index in 0..<4 {
            ids.append(try await harness.manager.add(harness.origin.serve("/f\(index).bin", size: 1000)))
        }
        var files: [URL] = []
        for id in ids { files.append(try await harness.manager.wait(for: id)) }
        // 0: the user's own file now (new inode), 1: a directory in its place, 2: deleted, 3: as Haul wrote it.
        try FileManager.default.removeItem(at: files[0])
        try Data("my notes".utf8).write(to: files[0])
        try FileManager.default.removeItem(at: files[1])
        try FileManager.default.createDirectory(at: files[1], withIntermediateDirectories: false)
        try FileManager.default.removeItem(at: files[2])

        let error = await #expect(throws: DownloadError.self) {
            try await harness.manager.remove(ids, deletingFiles: true)
        }
        #expect(error?.code == .fileChanged)
        #expect(error?.summary.contains(files[0].path) == true)
        #expect(error?.summary.contains("was not deleted") == true)
        #expect(try String(contentsOf: files[0], encoding: .utf8) == "my notes")
        var isDirectory: ObjCBool = false
        #expect(
            FileManager.default.fileExists(atPath: files[1].path, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(!FileManager.default.fileExists(atPath: files[3].path))
        // The downloads whose files were kept stay, so that they can be forgotten without --delete-file.
        #expect(await harness.manager.snapshots().map(\.id).sorted() == [ids[0], ids[1]])
        try await harness.manager.remove([ids[0], ids[1]])
        #expect(await harness.manager.snapshots().isEmpty)
        #expect(try String(contentsOf: files[0], encoding: .utf8) == "my notes")
        await harness.shutdown()
    }

    @Test("a speed limit holds, and can be changed while the download runs")
    func speedLimit() async throws {
        let harness = try await Harness.make()
        let size = 600_000
        let url = harness.origin.serve("/limited.bin", size: size)
        let started = ContinuousClock.now
        let id = try await harness.manager.add(url, options: .init(speedLimit: 300_000))
        try await harness.waitForProgress(id, atLeast: 150_000)
        try await harness.manager.setGlobalSpeedLimit(200_000)
        #expect(await harness.manager.globalSpeedLimit == 200_000)
        expectContent(try await harness.manager.wait(for: id), size: size)
        // Never faster than the limits allow (a lower bound cannot flake on a slow machine).
        #expect(started.duration(to: .now) >= .seconds(1.5))
        await #expect(throws: DownloadError.self) { try await harness.manager.setSpeedLimit(0, for: id) }
        try await harness.manager.setSpeedLimit(123_456, for: id)
        await harness.shutdown()
        let reopened = try await harness.reopen()
        #expect(await reopened.manager.snapshot(id)?.options.speedLimit == 123_456)
        await reopened.shutdown()
    }

    @Test("added paused: nothing is fetched until it is resumed, however small the file")
    func addedPaused() async throws {
        let harness = try await Harness.make(inMemory: true)
        let url = harness.origin.serve("/tiny.bin", size: 10)
        let id = try await harness.manager.add(url, paused: true)
        #expect(await harness.manager.snapshot(id)?.state == .paused)
        try await Task.sleep(for: .milliseconds(200))
        #expect(harness.origin.requests(to: "/tiny.bin").isEmpty)
        #expect(await harness.manager.snapshot(id)?.state == .paused)
        try await harness.manager.resume(id)
        expectContent(try await harness.manager.wait(for: id), size: 10)
        await harness.shutdown()
    }

    @Test("a host's speed limit holds for all its downloads together, and can be changed or lifted")
    func hostSpeedLimit() async throws {
        let harness = try await Harness.make(inMemory: true) { $0.hostSpeedLimits = ["127.0.0.1": 300_000] }
        #expect(await harness.manager.speedLimit(forHost: "127.0.0.1") == 300_000)
        let started = ContinuousClock.now
        let ids = [
            try await harness.manager.add(harness.origin.serve("/host-a.bin", size: 300_000)),
            try await harness.manager.add(harness.origin.serve("/host-b.bin", size: 300_000)),
        ]
        for id in ids { expectContent(try await harness.manager.wait(for: id), size: 300_000) }
        // 600 kB at 300 kB/s with a quarter-second burst: never under 1.75 s (a lower bound cannot flake).
        #expect(started.duration(to: .now) >= .seconds(1.5))
        try await harness.manager.setSpeedLimit(nil, forHost: "127.0.0.1")
        #expect(await harness.manager.speedLimit(forHost: "127.0.0.1") == nil)
        await #expect(throws: DownloadError.self) { try await harness.manager.setSpeedLimit(0, forHost: "a.example") }
        await harness.shutdown()
        await #expect(throws: DownloadError.self) {
            _ = try await Harness.make(inMemory: true) { $0.hostSpeedLimits = ["a.example": 0] }
        }
    }

    @Test("bad input is refused with a clear error")
    func badInput() async throws {
        let harness = try await Harness.make(inMemory: true)
        for url in ["ftp://example.com/x", "file:///etc/passwd", "http:///nohost"] {
            await #expect(throws: DownloadError.self) { try await harness.manager.add(URL(string: url)!) }
        }
        do {
            try await harness.manager.add(URL(string: "ftp://h/x")!)
        } catch {
            #expect(error.code == .invalidURL)
            #expect(error.description.contains("http"))
        }
        await #expect(throws: DownloadError.unknownDownload(404)) { try await harness.manager.resume(404) }
        await harness.shutdown()
    }
}

@Suite("File names and safety")
struct FileSafetyTests {
    @Test("a hostile Content-Disposition name lands inside the download directory")
    func hostileName() async throws {
        let harness = try await Harness.make(inMemory: true)
        var resource = TestOrigin.Resource(size: 1000)
        resource.contentDisposition =
            "attachment; filename=\"../../x.sh\"; filename*=UTF-8''..%2F..%2F..%2Ftmp%2Fevil%00%01%0A.sh"
        harness.origin.serve("/download", resource)
        let id = try await harness.manager.add(URL(string: harness.origin.url("/download").absoluteString + "?id=3")!)
        let file = try await harness.manager.wait(for: id)
        #expect(
            file.deletingLastPathComponent().standardizedFileURL.path == harness.directory.url.standardizedFileURL.path)
        #expect(file.lastPathComponent == "evil.sh")
        expectContent(file, size: 1000)
        await harness.shutdown()
    }

    @Test("a name that is taken gets ' (1)', and the existing file is untouched")
    func takenName() async throws {
        let harness = try await Harness.make(inMemory: true)
        try Data("mine".utf8).write(to: harness.directory.file("report.pdf"))
        var resource = TestOrigin.Resource(size: 1000)
        resource.contentDisposition = "attachment; filename=report.pdf"
        let first = try await harness.manager.add(harness.origin.serve("/a", resource))
        let second = try await harness.manager.add(harness.origin.serve("/b", resource))
        let names = [try await harness.manager.wait(for: first), try await harness.manager.wait(for: second)]
            .map(\.lastPathComponent).sorted()
        #expect(names == ["report (1).pdf", "report (2).pdf"])
        #expect(harness.directory.contents("report.pdf") == Array("mine".utf8))
        await harness.shutdown()
    }

    @Test("a symbolic link planted at the part path is never followed")
    func symlinkAtPartPath() async throws {
        let harness = try await Harness.make(inMemory: true)
        let victim = harness.directory.file("victim.txt")
        try Data("precious".utf8).write(to: victim)
        let target = harness.directory.file("out.bin")
        try FileManager.default.createSymbolicLink(atPath: target.path + ".part", withDestinationPath: victim.path)
        let id = try await harness.manager.add(harness.origin.serve("/s.bin", size: 1000), to: .file(target))
        await #expect(throws: DownloadError.self) { _ = try await harness.manager.wait(for: id) }
        #expect(await harness.manager.snapshot(id)?.lastError?.code == .destinationNotWritable)
        #expect(harness.directory.contents("victim.txt") == Array("precious".utf8))
        await harness.shutdown()
    }

    @Test("a symbolic link planted at the destination is replaced, not followed")
    func symlinkAtDestination() async throws {
        let harness = try await Harness.make(inMemory: true)
        let victim = harness.directory.file("victim2.txt")
        try Data("precious".utf8).write(to: victim)
        let target = harness.directory.file("out2.bin")
        try FileManager.default.createSymbolicLink(atPath: target.path, withDestinationPath: victim.path)
        let id = try await harness.manager.add(harness.origin.serve("/s2.bin", size: 1000), to: .file(target))
        expectContent(try await harness.manager.wait(for: id), size: 1000)
        #expect(harness.directory.contents("victim2.txt") == Array("precious".utf8))
        await harness.shutdown()
    }
}
