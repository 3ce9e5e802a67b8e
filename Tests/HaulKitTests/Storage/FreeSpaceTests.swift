import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// `--min-free-space`: a download that would take its file system below the floor waits, says why, and goes on by
/// itself once there is room. The file system is a fake one (``FreeSpacePolicy/probe``); a real full disk is in
/// `ServiceCommandTests`.
@Suite("Free space")
struct FreeSpaceTests {
    /// A file system whose free bytes a test sets.
    final class FakeDisk: Sendable {
        let free: Mutex<Int64>
        init(free: Int64) { self.free = Mutex(free) }
        func set(_ bytes: Int64) { free.withLock { $0 = bytes } }
    }

    static let floor: Int64 = 1 << 20

    static func harness(_ disk: FakeDisk, maximumWait: Duration? = nil) async throws -> Harness {
        try await Harness.make {
            $0.freeSpace.minimumFreeBytes = floor
            $0.freeSpace.checkInterval = .milliseconds(50)
            $0.freeSpace.maximumWait = maximumWait
            $0.freeSpace.probe = { _ in FreeSpaceReading(availableBytes: disk.free.withLock { $0 }, totalBytes: 1 << 30)
            }
        }
    }

    /// The waits a manager reported, in order.
    final class Seen: Sendable {
        let list = Mutex<[FreeSpaceShortage?]>([])
        var all: [FreeSpaceShortage?] { list.withLock { $0 } }
    }

    /// Collects the waits the manager reports.
    static func watch(_ manager: DownloadManager) async -> (Seen, EventObservation) {
        let seen = Seen()
        let observation = await manager.observeEvents { event in
            if case .waitingForSpace(let shortage) = event.change { seen.list.withLock { $0.append(shortage) } }
        }
        return (seen, observation)
    }

    @Test("below the floor before it starts: it waits, fetching nothing, shows why, then completes by itself")
    func waitsBeforeStarting() async throws {
        let disk = FakeDisk(free: 512 * 1024)
        let harness = try await Self.harness(disk)
        let (seen, observation) = await Self.watch(harness.manager)
        let url = harness.origin.serve("/f.bin", size: 300_001)
        let id = try await harness.manager.add(url)
        try await waitUntil { await harness.manager.snapshot(id)?.isWaitingForSpace == true }
        let snapshot = try #require(await harness.manager.snapshot(id))
        #expect(snapshot.state == .running)
        #expect(snapshot.lastError?.summary.hasPrefix("waiting for space: 1048576 bytes needed") == true)
        #expect(harness.origin.requests(to: "/f.bin").isEmpty, "nothing is fetched while it waits")
        try await Task.sleep(for: .milliseconds(200))
        #expect(await harness.manager.state(of: id) == .running, "still waiting, not failed")

        disk.set(64 << 20)
        await harness.manager.waitUntilEnded([id])
        let done = try #require(await harness.manager.snapshot(id))
        #expect(done.state == .completed)
        #expect(done.lastError == nil)
        expectContent(try #require(done.file), size: 300_001)
        let waits = seen.all
        #expect(waits.first??.neededBytes == Self.floor)
        #expect(waits.last == .some(nil), "it said when there was room again")
        observation.cancel()
        await harness.shutdown()
    }

    @Test("below the floor while it runs: it stops writing, waits counting what is left, then resumes byte-exact")
    func waitsWhileRunning() async throws {
        let disk = FakeDisk(free: 64 << 20)
        let harness = try await Self.harness(disk)
        harness.origin.setFaults { $0.bytesPerSecond = 512 * 1024 }
        let (seen, observation) = await Self.watch(harness.manager)
        let size = 1_500_007
        let id = try await harness.manager.add(harness.origin.serve("/r.bin", size: size))
        try await waitUntil { await harness.manager.snapshot(id)?.receivedBytes ?? 0 > 200_000 }
        disk.set(900 * 1024)
        try await waitUntil { await harness.manager.snapshot(id)?.isWaitingForSpace == true }
        let received = try #require(await harness.manager.snapshot(id)).receivedBytes
        try await Task.sleep(for: .milliseconds(300))
        #expect(try #require(await harness.manager.snapshot(id)).receivedBytes <= received + 64 * 1024)
        let shortage = try #require(seen.all.compactMap { $0 }.last)
        #expect(shortage.floorBytes == Self.floor)
        #expect(shortage.neededBytes > Self.floor, "what is left to write counts once the size is known")
        #expect(shortage.neededBytes <= Self.floor + Int64(size))

        disk.set(64 << 20)
        await harness.manager.waitUntilEnded([id])
        let done = try #require(await harness.manager.snapshot(id))
        #expect(done.state == .completed)
        expectContent(try #require(done.file), size: size)
        observation.cancel()
        await harness.shutdown()
    }

    @Test("with a longest wait, a download that never gets room fails with diskFull, keeping its bytes")
    func givesUp() async throws {
        let disk = FakeDisk(free: 100)
        let harness = try await Self.harness(disk, maximumWait: .milliseconds(300))
        let id = try await harness.manager.add(harness.origin.serve("/g.bin", size: 10_000))
        await harness.manager.waitUntilEnded([id])
        let failed = try #require(await harness.manager.snapshot(id))
        #expect(failed.state == .failed)
        #expect(failed.lastError?.code == .diskFull)
        #expect(failed.lastError?.summary.contains("no space left") == true)
        await harness.shutdown()
    }

    @Test("the default floor is 1 GiB or 5% of the file system, whichever is smaller; the probe reads statvfs")
    func defaults() throws {
        #expect(FreeSpacePolicy.defaultFloor(totalBytes: 100 << 30) == 1 << 30)
        #expect(FreeSpacePolicy.defaultFloor(totalBytes: 8 << 20) == (8 << 20) / 20)
        let policy = FreeSpacePolicy()
        #expect(policy.minimumFreeBytes == nil)
        let reading = try #require(FreeSpaceReading.of(FileManager.default.temporaryDirectory.path))
        #expect(reading.totalBytes > 0 && reading.availableBytes <= reading.totalBytes)
        #expect(FreeSpaceReading.of("/no/such/directory") == nil)
        #expect(FreeSpacePolicy(minimumFreeBytes: 0).shortage(at: "/no/such/directory", remaining: 1 << 40) == nil)
    }
}
