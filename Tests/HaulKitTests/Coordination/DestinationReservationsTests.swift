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
        let unfinished: (DownloadID) -> Bool = { _ in true }
        // The part file counts either way (the second download also passes over the first's reservation).
        #expect(
            reservations.reserve("a.bin", in: directory.path, for: 1, isUnfinished: unfinished)
                == directory.file("a (1).bin").path)
        #expect(
            reservations.reserve("a.bin", in: directory.path, for: 5, journal: false, isUnfinished: unfinished)
                == directory.file("a (2).bin").path)
        #expect(
            reservations.reserve("b.bin", in: directory.path, for: 2, isUnfinished: unfinished)
                == directory.file("b (1).bin").path)
        #expect(
            reservations.reserve("b.bin", in: directory.path, for: 3, journal: false, isUnfinished: unfinished)
                == directory.file("b.bin").path)
        // Held by an unfinished download: taken for any other.
        #expect(
            reservations.reserve("b.bin", in: directory.path, for: 4, journal: false, isUnfinished: unfinished)
                == directory.file("b (2).bin").path)
    }

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
