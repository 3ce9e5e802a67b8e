import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Reserving a destination")
struct DestinationReservationsTests {
    static let leftover = Data("another download's bytes\n".utf8)

    @Test("a name is free with its part file; with its journal too unless the download never keeps one")
    func siblings() throws {
        let directory = TemporaryDirectory()
        try Self.leftover.write(to: directory.file("a.bin.part"))
        try Self.leftover.write(to: directory.file("b.bin.part.segments"))
        var reservations = DestinationReservations()
        // In order: (name, download, journal, expected). The part file counts either way; the journal only for a
        // download that may keep one; a name reserved by an unfinished download is taken for any other.
        let cases: [(String, DownloadID, Bool, String)] = [
            ("a.bin", 1, true, "a (1).bin"), ("a.bin", 5, false, "a (2).bin"), ("b.bin", 2, true, "b (1).bin"),
            ("b.bin", 3, false, "b.bin"), ("b.bin", 4, false, "b (2).bin"),
        ]
        for (name, id, journal, expected) in cases {
            let path = reservations.reserve(name, in: directory.path, for: id, journal: journal) { _ in true }
            #expect(path == directory.file(expected).path, "\(name) for \(id)")
        }
    }

    @Test("a long name that is taken gets `name (1)`, cut to fit: it was looked for forever")
    func longNameTaken() throws {
        let directory = TemporaryDirectory()
        let name = try #require(FileNamer.sanitise(String(repeating: "a", count: 240) + ".bin"))
        try Self.leftover.write(to: directory.file(name))
        var reservations = DestinationReservations()
        let first = reservations.reserve(name, in: directory.path, for: 1) { _ in true }
        let second = reservations.reserve(name, in: directory.path, for: 2) { _ in true }
        #expect(first.hasSuffix(" (1).bin") && second.hasSuffix(" (2).bin"), "\(first) \(second)")
        for path in [first, second] {
            #expect(URL(fileURLWithPath: path).lastPathComponent.utf8.count <= FileNamer.maximumLength)
        }
    }

    @Test("a listed directory still finds free only names that nobody made: before it was listed or after")
    func listedDirectory() throws {
        let directory = TemporaryDirectory()
        try Self.leftover.write(to: directory.file("early.bin"))
        var reservations = DestinationReservations()
        for number in 0..<DestinationReservations.listingThreshold {
            let path = reservations.reserve("new-\(number).bin", in: directory.path, for: 1) { _ in true }
            #expect(path == directory.file("new-\(number).bin").path)
        }
        #if os(Linux)
        guard reservations.isListed(directory.path) else {
            print("skipped: \(directory.path) is not on ext4, btrfs or tmpfs, so Haul looks each name up")
            return
        }
        #endif
        // Made by others after the listing: a file, a part file, a journal, a directory.
        try Self.leftover.write(to: directory.file("late.bin"))
        try Self.leftover.write(to: directory.file("part.bin.part"))
        try Self.leftover.write(to: directory.file("journal.bin.part.segments"))
        try FileManager.default.createDirectory(at: directory.file("folder.bin"), withIntermediateDirectories: false)
        let cases: [(String, Bool, String)] = [
            ("early.bin", false, "early (1).bin"), ("late.bin", false, "late (1).bin"),
            ("part.bin", false, "part (1).bin"), ("journal.bin", false, "journal (1).bin"),
            ("folder.bin", true, "folder (1).bin"), ("free.bin", false, "free.bin"),
            // A regular file at the name is replaced, as without a listing.
            ("late.bin", true, "late.bin"),
        ]
        for (number, (name, replacing, expected)) in cases.enumerated() {
            let path = reservations.reserve(
                name, in: directory.path, for: DownloadID(rawValue: Int64(100 + number)), replacingFiles: replacing
            ) { _ in false }
            #expect(path == directory.file(expected).path, "\(name)")
        }
        // Removed by others: free again.
        try FileManager.default.removeItem(at: directory.file("early.bin"))
        let path = reservations.reserve("early.bin", in: directory.path, for: 200) { _ in false }
        #expect(path == directory.file("early.bin").path)
        #expect(reservations.isListed(directory.path))
    }

    #if os(Linux)
    @Test("the names counted toward listing a directory are bounded, for a daemon that saves into many")
    func countedDirectoriesBounded() {
        let directory = TemporaryDirectory()
        var reservations = DestinationReservations()
        for number in 0...DestinationReservations.countedLimit {
            _ = reservations.reserve("a.bin", in: directory.file("d\(number)").path, for: 1) { _ in true }
        }
        #expect(reservations.countedDirectories == 1)
        _ = reservations.reserve("a.bin", in: directory.file("d0").path, for: 1) { _ in true }
        #expect(reservations.countedDirectories == 2)
    }
    #endif

    @Test("another download's part file or journal is left alone; a small file passes over a lone journal only")
    func leftoversOfOthers() async throws {
        let harness = try await Harness.make()
        let directory = harness.directory
        for name in ["small.bin.part", "lone.bin.part.segments", "large.bin.part.segments"] {
            try Self.leftover.write(to: directory.file(name))
        }
        let small = try await harness.manager.add(harness.origin.serve("/small.bin", size: 3_000))
        let lone = try await harness.manager.add(harness.origin.serve("/lone.bin", size: 3_000))
        let large = try await harness.manager.add(harness.origin.serve("/large.bin", size: 600_000))

        let smallFile = try await harness.manager.wait(for: small)
        let loneFile = try await harness.manager.wait(for: lone)
        let largeFile = try await harness.manager.wait(for: large)
        #expect(smallFile.lastPathComponent == "small (1).bin")
        #expect(loneFile.lastPathComponent == "lone.bin")
        #expect(largeFile.lastPathComponent == "large (1).bin")
        expectContent(smallFile, size: 3_000)
        expectContent(loneFile, size: 3_000)
        expectContent(largeFile, size: 600_000)
        for name in ["small.bin.part", "lone.bin.part.segments", "large.bin.part.segments"] {
            #expect(directory.contents(name) == [UInt8](Self.leftover), "\(name)")
        }
        await harness.shutdown()
    }
}
