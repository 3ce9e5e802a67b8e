import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// The free-space check before each attempt: one reading of a directory's file system shared for a moment by the
/// downloads starting in it, each drawing what it still has to write, and never a shortage kept. The file system is
/// a fake one whose reads are counted.
@Suite("Free space gauge")
struct FreeSpaceGaugeTests {
    /// A file system whose free bytes a test sets, counting its reads and the paths read.
    final class FakeDisk: Sendable {
        private let state = Mutex<(free: Int64, reads: [String])>((0, []))
        init(free: Int64) { state.withLock { $0.free = free } }
        func set(_ bytes: Int64) { state.withLock { $0.free = bytes } }
        var reads: [String] { state.withLock { $0.reads } }

        /// A probe of this disk; `exists` says which paths can be read (as `statvfs` reads only existing ones).
        func policy(floor: Int64, exists: @escaping @Sendable (String) -> Bool = { _ in true }) -> FreeSpacePolicy {
            var policy = FreeSpacePolicy(minimumFreeBytes: floor)
            policy.probe = { path in
                self.state.withLock { state in
                    state.reads.append(path)
                    return exists(path) ? FreeSpaceReading(availableBytes: state.free, totalBytes: 1 << 40) : nil
                }
            }
            return policy
        }
    }

    static let floor: Int64 = 1 << 20

    @Test("downloads starting in one directory share a reading, each drawing what it will write from it")
    func sharesAReading() {
        let disk = FakeDisk(free: Self.floor + 10_000)
        let gauge = FreeSpaceGauge(disk.policy(floor: Self.floor))
        for _ in 0..<3 { #expect(gauge.shortage(in: "/d", remaining: 3_000) == nil) }
        #expect(disk.reads == ["/d"], "one reading for three downloads that fit in it")
        // A fourth does not fit in what the reading has left: the file system is read again (it has not changed, so
        // there is room: each download alone fits, as without sharing).
        #expect(gauge.shortage(in: "/d", remaining: 3_000) == nil)
        #expect(disk.reads == ["/d", "/d"])
        // Another directory has a reading of its own; a size not known yet draws nothing.
        #expect(gauge.shortage(in: "/e", remaining: 0) == nil)
        #expect(gauge.shortage(in: "/e", remaining: 0) == nil)
        #expect(disk.reads == ["/d", "/d", "/e"])
    }

    @Test("a shortage is never shared: the next check reads again, and sees the room made since")
    func neverSharesAShortage() async throws {
        let disk = FakeDisk(free: Self.floor + 1_000)
        let gauge = FreeSpaceGauge(disk.policy(floor: Self.floor))
        let shortage = try #require(gauge.shortage(in: "/d", remaining: 5_000))
        #expect(
            shortage
                == FreeSpaceShortage(
                    path: "/d", neededBytes: Self.floor + 5_000, availableBytes: Self.floor + 1_000,
                    floorBytes: Self.floor))
        #expect(gauge.shortage(in: "/d", remaining: 5_000) != nil)
        disk.set(Self.floor + 100_000)
        #expect(gauge.shortage(in: "/d", remaining: 5_000) == nil)
        #expect(disk.reads.count == 3)
        // Space taken by something else shows once the shared reading is older than its lifetime.
        disk.set(0)
        #expect(gauge.shortage(in: "/d", remaining: 5_000) == nil, "still within the reading's lifetime")
        try await Task.sleep(for: FreeSpaceGauge.lifetime + .milliseconds(50))
        #expect(gauge.shortage(in: "/d", remaining: 5_000) != nil)
    }

    @Test("a directory not made yet is read through the nearest one above it that exists, and named in the shortage")
    func readsTheNearestExistingDirectory() throws {
        let directory = TemporaryDirectory()
        let missing = directory.file("a/b").path
        let disk = FakeDisk(free: 0)
        let gauge = FreeSpaceGauge(disk.policy(floor: Self.floor) { FileManager.default.fileExists(atPath: $0) })
        let shortage = try #require(gauge.shortage(in: missing, remaining: 1))
        #expect(shortage.path == directory.path)
        #expect(disk.reads == [missing, directory.path])
        // Nothing readable at all: no shortage (a write says whether there is room).
        let unreadable = FreeSpaceGauge(FakeDisk(free: 0).policy(floor: Self.floor) { _ in false })
        #expect(unreadable.shortage(in: missing, remaining: 1 << 40) == nil)
    }

    @Test("the real file system is read through statvfs, with the default floor")
    func readsTheRealFileSystem() {
        let directory = TemporaryDirectory()
        let gauge = FreeSpaceGauge(FreeSpacePolicy())
        #expect(gauge.shortage(in: directory.file("new/dir").path, remaining: 1) == nil)
        let shortage = gauge.shortage(in: directory.path, remaining: 1 << 60)
        #expect(shortage?.path == directory.path)
        #expect(shortage?.neededBytes ?? 0 > 1 << 60)
    }

    /// File systems with these free bytes by path (each 1 TiB), counting the reads.
    final class Disks: Sendable {
        let free: [String: Int64]
        private let log = Mutex<[String]>([])
        init(_ free: [String: Int64]) { self.free = free }
        var reads: [String] { log.withLock { $0 } }

        /// A policy reading these file systems, with `state` as the state database's directory.
        func policy(floor: Int64?, state: String?) -> FreeSpacePolicy {
            var policy = FreeSpacePolicy(minimumFreeBytes: floor)
            policy.stateDirectory = state
            policy.probe = { path in
                self.log.withLock { $0.append(path) }
                return self.free[path].map { FreeSpaceReading(availableBytes: $0, totalBytes: 1 << 40) }
            }
            return policy
        }
    }

    @Test("the state database's file system must have room too, above its own floor of 16 MiB at most")
    func stateDirectory() throws {
        let stateFloor = FreeSpacePolicy.stateFloorBytes
        // The destination has room; the state's file system is under its floor: the download waits, naming it.
        var gauge = FreeSpaceGauge(Disks(["/d": 1 << 40, "/s": stateFloor - 1]).policy(floor: nil, state: "/s"))
        let shortage = try #require(gauge.shortage(in: "/d", remaining: 5_000))
        #expect(
            shortage
                == FreeSpaceShortage(
                    path: "/s", neededBytes: stateFloor, availableBytes: stateFloor - 1, floorBytes: stateFloor))
        // Room on both: none; the state's reading is shared for a moment like any other.
        var disks = Disks(["/d": 1 << 40, "/s": stateFloor])
        gauge = FreeSpaceGauge(disks.policy(floor: nil, state: "/s"))
        #expect(gauge.shortage(in: "/d", remaining: 5_000) == nil)
        #expect(gauge.shortage(in: "/d", remaining: 5_000) == nil)
        #expect(disks.reads == ["/d", "/s"])
        // A smaller floor wins (`--min-free-space 1M`), and none keeps none: only a full file system stops it.
        gauge = FreeSpaceGauge(Disks(["/d": 1 << 40, "/s": 1 << 20]).policy(floor: 1 << 20, state: "/s"))
        #expect(gauge.shortage(in: "/d", remaining: 0) == nil)
        gauge = FreeSpaceGauge(Disks(["/d": 1 << 40, "/s": 0]).policy(floor: 0, state: "/s"))
        #expect(gauge.shortage(in: "/d", remaining: 0) == nil)
        // The destination's own shortage comes first; a destination in the state directory is read once.
        gauge = FreeSpaceGauge(Disks(["/d": 10, "/s": 0]).policy(floor: nil, state: "/s"))
        #expect(gauge.shortage(in: "/d", remaining: 0)?.path == "/d")
        disks = Disks(["/s": 1 << 40])
        gauge = FreeSpaceGauge(disks.policy(floor: nil, state: "/s"))
        #expect(gauge.shortage(in: "/s", remaining: 0) == nil)
        #expect(disks.reads == ["/s"])
    }
}
