import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Resuming")
struct ResumeTests {
    @Test("a cut connection resumes at the exact byte with If-Range")
    func resumesAfterCut() async throws {
        let harness = try await Harness.make()
        let size = 2 * 1024 * 1024 + 5
        let url = harness.origin.serve("/cut.bin", size: size)
        harness.origin.setFaults {
            $0.cutAfter = 700_001
            $0.cutTimes = 1
        }
        let id = try await harness.manager.add(url)
        expectContent(try await harness.manager.wait(for: id), size: size)

        let requests = harness.origin.requests(to: "/cut.bin")
        try #require(requests.count == 2)
        // Where the second request starts is what the client had written when the cut came: all 700,001 bytes
        // usually; fewer on a loaded machine, where the close can overtake bytes read but not yet handed over (the
        // origin lingers 250 ms first). Either way exactly the missing bytes are asked for again, and no more.
        let resumedAt = try #require(requests[1].range.flatMap { Int($0.dropFirst(6).dropLast()) })
        #expect(resumedAt > 0 && resumedAt <= 700_001 && requests[1].range == "bytes=\(resumedAt)-")
        #expect(requests[1].ifRange == TestOrigin.Resource(size: size).etag)
        #expect(harness.origin.bodyBytesSent(to: "/cut.bin") == size + (700_001 - resumedAt))
        await harness.shutdown()
    }

    @Test("pause keeps the bytes; resume re-checks 64 KiB before the persisted offset and continues")
    func pauseAndResume() async throws {
        let harness = try await Harness.make()
        let size = 3 * 1024 * 1024
        let url = harness.origin.serve("/pause.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
        let id = try await harness.manager.add(url)
        try await harness.waitForProgress(id, atLeast: 512 * 1024)
        try await harness.manager.pause(id)

        let paused = try #require(await harness.manager.snapshot(id))
        #expect(paused.state == .paused)
        let part = try #require(paused.file).path + ".part"
        let partSize = try #require(FileManager.default.attributesOfItem(atPath: part)[.size] as? Int)
        #expect(Int64(partSize) == paused.receivedBytes)
        #expect(!FileManager.default.fileExists(atPath: try #require(paused.file).path))

        harness.origin.setFaults { $0.bytesPerSecond = nil }
        try await harness.manager.resume(id)
        expectContent(try await harness.manager.wait(for: id), size: size)
        let resumed = try #require(harness.origin.requests(to: "/pause.bin").last)
        #expect(resumed.range == "bytes=\(partSize - 64 * 1024)-")
        #expect(resumed.ifRange == TestOrigin.Resource(size: size).etag)
        await harness.shutdown()
    }

    @Test("a paused download whose directory was deleted with its part file starts again there on resume")
    func directoryDeletedWhilePaused() async throws {
        let harness = try await Harness.make()
        let size = 2 * 1024 * 1024
        let url = harness.origin.serve("/gone.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
        let destination = harness.directory.file("later/gone.bin")
        let id = try await harness.manager.add(url, to: .file(destination))
        try await harness.waitForProgress(id, atLeast: 256 * 1024)
        try await harness.manager.pause(id)
        try FileManager.default.removeItem(at: destination.deletingLastPathComponent())

        harness.origin.setFaults { $0.bytesPerSecond = nil }
        try await harness.manager.resume(id)
        #expect(try await harness.manager.wait(for: id) == destination)
        expectContent(destination, size: size)
        #expect(harness.origin.requests(to: "/gone.bin").last?.range == "bytes=0-", "nothing was left to resume from")
        await harness.shutdown()
    }

    @Test("a server that ignores ranges gets a clean restart from byte 0")
    func serverIgnoresRange() async throws {
        let harness = try await Harness.make()
        let size = 1024 * 1024
        let url = harness.origin.serve("/norange.bin", size: size)
        harness.origin.setFaults {
            $0.ignoresRange = true
            $0.cutAfter = 300_000
            $0.cutTimes = 1
        }
        let events = await harness.manager.events()
        let id = try await harness.manager.add(url)
        expectContent(try await harness.manager.wait(for: id), size: size)
        #expect(await restartReasons(events, id) == [.serverIgnoredRange])
        #expect(harness.origin.requests(to: "/norange.bin").map(\.status) == [200, 200])
        await harness.shutdown()
    }

    @Test("a file that changed between pause and resume is downloaded again entirely as the new version")
    func resourceChangedWhilePaused() async throws {
        let harness = try await Harness.make()
        let size = 2 * 1024 * 1024
        let (id, events) = try await pauseChangeResume(harness, TestOrigin.Resource(size: size), "/changing.bin") {
            $0.version = 1
        }
        expectContent(try await harness.manager.wait(for: id), size: size, version: 1)
        #expect(await restartReasons(events, id) == [.resourceChanged])
        let last = try #require(harness.origin.requests(to: "/changing.bin").last)
        #expect(last.ifRange == TestOrigin.Resource(size: size).etag)  // the old version's ETag…
        #expect(last.status == 200)  // …so the server sent the new file whole
        await harness.shutdown()
    }

    @Test("a file that changed without changing its validators is caught by the overlap check")
    func silentChangeCaughtByOverlap() async throws {
        let harness = try await Harness.make()
        let size = 2 * 1024 * 1024
        var resource = TestOrigin.Resource(size: size)
        resource.fixedValidators = true
        let (id, events) = try await pauseChangeResume(harness, resource, "/liar.bin") { $0.version = 7 }
        expectContent(try await harness.manager.wait(for: id), size: size, version: 7)
        #expect(await restartReasons(events, id) == [.contentMismatch])
        await harness.shutdown()
    }

    @Test("a wrong Content-Range is never appended: the download restarts without ranges")
    func wrongContentRange() async throws {
        let harness = try await Harness.make()
        let size = 1024 * 1024
        let url = harness.origin.serve("/shifted.bin", size: size)
        harness.origin.setFaults {
            $0.cutAfter = 200_000
            $0.cutTimes = 1
            $0.contentRangeShift = 100
        }
        let events = await harness.manager.events()
        let id = try await harness.manager.add(url)
        expectContent(try await harness.manager.wait(for: id), size: size)
        #expect(await restartReasons(events, id) == [.rangeMismatch])
        let requests = harness.origin.requests(to: "/shifted.bin")
        #expect(requests.last?.range == nil)
        await harness.shutdown()
    }

    @Test("a restarted manager continues the downloads that were running")
    func restartedManagerContinues() async throws {
        let harness = try await Harness.make()
        let size = 3 * 1024 * 1024
        let url = harness.origin.serve("/long.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
        let running = try await harness.manager.add(url)
        let paused = try await harness.manager.add(harness.origin.serve("/other.bin", size: 10))
        try await harness.manager.pause(paused)
        try await harness.waitForProgress(running, atLeast: 400 * 1024)
        await harness.manager.shutdown()
        let stoppedAt = try #require(await harness.manager.snapshot(running)).receivedBytes

        harness.origin.setFaults { $0.bytesPerSecond = nil }
        let reopened = try await harness.reopen()
        #expect(await reopened.manager.snapshot(paused)?.state == .paused)
        expectContent(try await reopened.manager.wait(for: running), size: size)
        let resumed = try #require(harness.origin.requests(to: "/long.bin").last)
        #expect(resumed.range == "bytes=\(stoppedAt - 64 * 1024)-")
        #expect(await reopened.manager.snapshot(paused)?.state == .paused)
        await reopened.shutdown()
    }

    @Test("after another boot only the synced bytes are trusted; the unsynced tail is cut off")
    func afterRebootTrustsOnlySyncedBytes() async throws {
        let harness = try await Harness.make()
        let size = 2 * 1024 * 1024
        let url = harness.origin.serve("/reboot.bin", size: size)
        let id = try await harness.manager.add(url)
        _ = id
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        try await harness.waitForProgress(id, atLeast: 300 * 1024)
        await harness.manager.shutdown()

        // Pretend the machine crashed: the record is from another boot and claims fewer synced bytes than the file
        // holds, and the unsynced tail holds garbage (as after power loss).
        let store = try SQLiteDownloadStore(path: harness.directory.file("state/haul.sqlite").path)
        var record = try #require(try await store.fetch(id))
        let durable: Int64 = 200_000
        record.transfer.durableBytes = durable
        record.transfer.bootID = "another-boot"
        try await store.saveTransfer(record)
        let part = try #require(record.partPath)
        let handle = try #require(FileHandle(forWritingAtPath: part))
        try handle.seek(toOffset: UInt64(durable))
        try handle.write(contentsOf: Data(repeating: 0, count: 100_000))
        try handle.close()

        harness.origin.setFaults { $0.bytesPerSecond = nil }
        let reopened = try await harness.reopen()
        expectContent(try await reopened.manager.wait(for: id), size: size)
        let resumed = try #require(harness.origin.requests(to: "/reboot.bin").last)
        #expect(resumed.range == "bytes=\(durable - 64 * 1024)-")
        await reopened.shutdown()
    }

    @Test("a part file Haul did not record is never trusted as a prefix")
    func foreignPartFileIgnored() async throws {
        let harness = try await Harness.make()
        let size = 500_000
        let url = harness.origin.serve("/foreign.bin", size: size)
        let target = harness.directory.file("foreign.bin")
        try Data(repeating: 0xAB, count: 300_000).write(to: URL(fileURLWithPath: target.path + ".part"))
        let id = try await harness.manager.add(url, to: .file(target))
        expectContent(try await harness.manager.wait(for: id), size: size)
        #expect(harness.origin.requests(to: "/foreign.bin").map(\.range) == ["bytes=0-"])
        await harness.shutdown()
    }

    @Test("Content-Encoding gzip on a .gz file: ranges count the encoded bytes, which are saved as sent")
    func encodedBodyResumesExactly() async throws {
        let harness = try await Harness.make()
        let size = 800_000
        var resource = TestOrigin.Resource(size: size)
        resource.contentEncoding = "gzip"
        // The name says the file is compressed: the encoded bytes are the file (other names are decoded).
        let url = harness.origin.serve("/enc.bin.gz", resource)
        harness.origin.setFaults {
            $0.cutAfter = 123_457
            $0.cutTimes = 1
        }
        let id = try await harness.manager.add(url)
        expectContent(try await harness.manager.wait(for: id), size: size)
        #expect(harness.origin.requests(to: "/enc.bin.gz").last?.range == "bytes=123457-")
        await harness.shutdown()
    }

    @Test("a download that lost the race with its rename finishes it after a restart")
    func interruptedFinalization() async throws {
        let harness = try await Harness.make()
        // Above the size held in memory: a part file is recorded finalizing before its rename.
        let size = 300_000
        let url = harness.origin.serve("/final.bin", size: size)
        let id = try await harness.manager.add(url)
        let file = try await harness.manager.wait(for: id)
        await harness.manager.shutdown()
        // Put the world back to "synced and committed to finalizing, not yet renamed".
        try FileManager.default.moveItem(atPath: file.path, toPath: file.path + ".part")
        let store = try SQLiteDownloadStore(path: harness.directory.file("state/haul.sqlite").path)
        var record = try #require(try await store.fetch(id))
        record.state = .running
        try await store.saveLifecycle(record)

        let reopened = try await harness.reopen()
        expectContent(try await reopened.manager.wait(for: id), size: size)
        #expect(harness.origin.requests(to: "/final.bin").count == 1)
        await reopened.shutdown()
    }
}

/// Starts downloading `resource` slowly, pauses it after 300 KiB, changes the resource, and resumes at full speed.
func pauseChangeResume(
    _ harness: Harness, _ resource: TestOrigin.Resource, _ path: String, change: (inout TestOrigin.Resource) -> Void
) async throws -> (DownloadID, AsyncStream<DownloadEvent>) {
    let url = harness.origin.serve(path, resource)
    harness.origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
    let events = await harness.manager.events()
    let id = try await harness.manager.add(url)
    try await harness.waitForProgress(id, atLeast: 300 * 1024)
    try await harness.manager.pause(id)
    harness.origin.updateResource(path, change)
    harness.origin.setFaults { $0.bytesPerSecond = nil }
    try await harness.manager.resume(id)
    return (id, events)
}

/// The restart reasons reported for `id` until it completes or fails.
func restartReasons(_ events: AsyncStream<DownloadEvent>, _ id: DownloadID) async -> [RestartReason] {
    var reasons: [RestartReason] = []
    for await event in events where event.id == id {
        switch event.change {
        case .restarted(let reason): reasons.append(reason)
        case .status(.completed), .status(.failed): return reasons
        default: continue
        }
    }
    return reasons
}
