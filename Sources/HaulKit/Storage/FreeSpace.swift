import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much room a file system has, as `statvfs` reports it to an unprivileged process.
public struct FreeSpaceReading: Sendable, Hashable {
    /// Bytes this process may still write (`f_bavail`: without the blocks reserved for root).
    public var availableBytes: Int64
    /// The file system's size.
    public var totalBytes: Int64

    public init(availableBytes: Int64, totalBytes: Int64) {
        self.availableBytes = availableBytes
        self.totalBytes = totalBytes
    }

    /// The reading of the file system that holds `path` (a file or a directory that exists); nil when it cannot be
    /// read.
    public static func of(_ path: String) -> FreeSpaceReading? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let block = Int64(info.f_frsize == 0 ? info.f_bsize : info.f_frsize)
        return FreeSpaceReading(
            availableBytes: Int64(info.f_bavail) * block, totalBytes: Int64(info.f_blocks) * block)
    }
}

/// How much room a download leaves on its destination's file system: `--min-free-space`.
///
/// Before each attempt a download needs the floor plus what it still has to write (where the size is known); while
/// it runs, the file system must stay above the floor; and a write that finds no room (`ENOSPC`, `EDQUOT`) is not a
/// failure. In each case the download waits, still running but holding no slot, with the reason "waiting for space"
/// (``DownloadSnapshot/isWaitingForSpace``), looks again every ``checkInterval``, and goes on by itself once there
/// is room. See `docs/service.md`.
public struct FreeSpacePolicy: Sendable {
    /// The bytes to leave free; nil for the default: 1 GiB or 5% of the file system, whichever is smaller. 0 keeps
    /// no floor: only a write that finds no room makes a download wait.
    public var minimumFreeBytes: Int64?
    /// How often a waiting download looks at the free space again, and a running one checks the floor. Default 5 s.
    public var checkInterval: Duration = .seconds(5)
    /// How long a download waits for space before it fails with ``DownloadError/Code/diskFull``; nil waits until
    /// there is room (a daemon, `haul run`). Default nil.
    public var maximumWait: Duration?
    /// Reads the free space of the file system holding a path; tests give a fake one. Default ``FreeSpaceReading/of(_:)``.
    public var probe: @Sendable (_ path: String) -> FreeSpaceReading? = { FreeSpaceReading.of($0) }

    /// The directory of the state database, where every download's start and end are recorded; nil when there is
    /// none on this machine (a shared database, or none at all). Set by the manager from its store. Downloads also
    /// wait while its file system has less than ``stateFloor(of:)`` free: a download fetched while its end cannot be
    /// recorded would be fetched again.
    var stateDirectory: String?

    /// The room a download leaves on the state database's file system: ``stateFloorBytes`` (a few times what
    /// SQLite's log grows to between checkpoints), or the floor of that file system where that is smaller (none
    /// with `--min-free-space 0`).
    static let stateFloorBytes: Int64 = 16 << 20

    public init(minimumFreeBytes: Int64? = nil) { self.minimumFreeBytes = minimumFreeBytes }

    /// The floor on the state database's file system as `reading` describes it (see ``stateDirectory``).
    func stateFloor(of reading: FreeSpaceReading) -> Int64 { min(Self.stateFloorBytes, floor(of: reading)) }

    /// The default floor of a file system of `totalBytes`: 1 GiB or 5% of it, whichever is smaller.
    public static func defaultFloor(totalBytes: Int64) -> Int64 { min(1 << 30, totalBytes / 20) }

    /// The floor on a file system as `reading` describes it.
    public func floor(of reading: FreeSpaceReading) -> Int64 {
        minimumFreeBytes ?? Self.defaultFloor(totalBytes: reading.totalBytes)
    }

    /// Why a download that still has to write `remaining` bytes (0 when unknown) into `path`'s file system must wait,
    /// or nil when there is room (or the file system cannot be read: a real write then says whether there is).
    public func shortage(at path: String, remaining: Int64) -> FreeSpaceShortage? {
        probe(path).flatMap { shortage(reading: $0, at: path, remaining: remaining) }
    }

    /// The shortage `reading` of `path`'s file system shows for `remaining` bytes still to write above `floor`
    /// (the file system's ``floor(of:)`` when nil); nil for none.
    func shortage(
        reading: FreeSpaceReading, at path: String, remaining: Int64, floor: Int64? = nil
    ) -> FreeSpaceShortage? {
        let minimum = floor ?? self.floor(of: reading)
        let needed = minimum + max(0, remaining)
        guard reading.availableBytes < needed else { return nil }
        return FreeSpaceShortage(
            path: path, neededBytes: needed, availableBytes: reading.availableBytes, floorBytes: minimum)
    }
}
