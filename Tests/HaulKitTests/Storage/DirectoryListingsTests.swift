#if os(Linux)
import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Listed directories")
struct DirectoryListingsTests {
    @Test("a path is shown free only while its directory's listing holds nothing there")
    func showsFree() throws {
        let directory = TemporaryDirectory()
        let listings = DirectoryListings()
        listings.list(directory.path)
        guard listings[directory.path] != nil else {
            return print("skipped: \(directory.path) is not on ext4, btrfs or tmpfs, so it is not listed")
        }
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
        let listings = DirectoryListings()
        listings.list(directory.path)
        guard listings[directory.path] != nil else {
            return print("skipped: \(directory.path) is not on ext4, btrfs or tmpfs, so it is not listed")
        }
        let elsewhere = TemporaryDirectory()
        try FileManager.default.moveItem(at: directory.url, to: elsewhere.file("away"))
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: false)
        #expect(listings.showFree([directory.file("a.bin.part").path]) == [false])
        #expect(listings[directory.path] == nil)
    }

    @Test("no more directories are listed at once than the limit; the one listed last is kept")
    func limited() throws {
        let listings = DirectoryListings()
        let directories = (0...DirectoryListings.limit).map { _ in TemporaryDirectory() }
        listings.list(directories[0].path)
        guard listings[directories[0].path] != nil else {
            return print("skipped: the temporary directory is not on ext4, btrfs or tmpfs, so it is not listed")
        }
        for directory in directories.dropFirst() { listings.list(directory.path) }
        #expect(directories.filter { listings[$0.path] != nil }.count == DirectoryListings.limit)
        #expect(listings[directories.last!.path] != nil)
    }
}
#endif
