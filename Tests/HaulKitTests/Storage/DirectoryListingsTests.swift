#if os(Linux)
import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Listed directories")
struct DirectoryListingsTests {
    /// Listings with `directory` listed; nil (with a message) where this file system gets none.
    static func listing(_ directory: TemporaryDirectory) -> DirectoryListings? {
        let listings = DirectoryListings()
        listings.list(directory.path)
        guard listings[directory.path] != nil else {
            print("skipped: \(directory.path) is not on ext4, btrfs or tmpfs, so it is not listed")
            return nil
        }
        return listings
    }

    @Test("a path is shown free only while its directory's listing holds nothing there")
    func showsFree() throws {
        let directory = TemporaryDirectory()
        guard let listings = Self.listing(directory) else { return }
        let part = directory.file("a.bin.part").path
        let unlisted = TemporaryDirectory().file("a.bin.part").path
        #expect(
            listings.showFree([part, unlisted, directory.path + "/.", directory.path + "/"]) == [
                true, false, false, false,
            ])
        try Data("theirs".utf8).write(to: directory.file("a.bin.part"))
        #expect(listings.showFree([part, directory.file("b.bin.part").path]) == [false, true])
        try FileManager.default.removeItem(at: directory.file("a.bin.part"))
        #expect(listings.showFree([part]) == [true])
    }

    @Test("a listing that is lost is dropped, and nothing is shown free in its directory")
    func dropsALostListing() throws {
        let directory = TemporaryDirectory()
        guard let listings = Self.listing(directory) else { return }
        let elsewhere = TemporaryDirectory()
        try FileManager.default.moveItem(at: directory.url, to: elsewhere.file("away"))
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: false)
        #expect(listings.showFree([directory.file("a.bin.part").path]) == [false])
        #expect(listings[directory.path] == nil)
    }

    @Test("no more directories are listed at once than the limit; the one listed last is kept")
    func limited() throws {
        let directories = (0...DirectoryListings.limit).map { _ in TemporaryDirectory() }
        guard let listings = Self.listing(directories[0]) else { return }
        for directory in directories.dropFirst() { listings.list(directory.path) }
        #expect(directories.filter { listings[$0.path] != nil }.count == DirectoryListings.limit)
        #expect(listings[directories.last!.path] != nil)
    }
}
#endif
