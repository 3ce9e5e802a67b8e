#if os(Linux)
import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Listing a directory")
struct DirectoryListingTests {
    /// A listing of a fresh directory holding `names`; nil (with a message) where this file system gets none.
    static func listing(of directory: TemporaryDirectory, holding names: [String]) throws -> DirectoryListing? {
        for name in names { try Data("x".utf8).write(to: directory.file(name)) }
        guard let listing = DirectoryListing(path: directory.path) else {
            print("skipped: \(directory.path) is not on ext4, btrfs or tmpfs, so Haul looks each name up")
            return nil
        }
        return listing
    }

    @Test("it follows the files that others make, rename and remove")
    func followsChanges() throws {
        let directory = TemporaryDirectory()
        guard let listing = try Self.listing(of: directory, holding: ["a.bin", "b.bin"]) else { return }
        #expect(listing.contains("a.bin") && listing.contains("b.bin") && !listing.contains("c.bin"))

        try Data("y".utf8).write(to: directory.file("c.bin"))
        try FileManager.default.moveItem(at: directory.file("b.bin"), to: directory.file("d.bin"))
        try FileManager.default.removeItem(at: directory.file("a.bin"))
        try FileManager.default.createDirectory(at: directory.file("e"), withIntermediateDirectories: false)
        #expect(listing.refresh())
        #expect(!listing.contains("a.bin") && !listing.contains("b.bin"))
        #expect(listing.contains("c.bin") && listing.contains("d.bin") && listing.contains("e"))
    }

    @Test("it is lost when its directory is moved, replaced or removed")
    func lostWithItsDirectory() throws {
        let directory = TemporaryDirectory()
        guard let moved = try Self.listing(of: directory, holding: ["a.bin"]) else { return }
        let elsewhere = TemporaryDirectory()
        let away = elsewhere.file("away")
        try FileManager.default.moveItem(at: directory.url, to: away)
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: false)
        #expect(!moved.refresh(), "another directory at the path")

        let removed = try #require(DirectoryListing(path: directory.path))
        #expect(removed.refresh())
        try FileManager.default.removeItem(at: directory.url)
        #expect(!removed.refresh(), "no directory at the path")
    }

    @Test("a directory reached through a symbolic link is listed, until the link names another directory")
    func throughASymbolicLink() throws {
        let directory = TemporaryDirectory()
        guard try Self.listing(of: directory, holding: ["a.bin"]) != nil else { return }
        let links = TemporaryDirectory()
        let link = links.file("downloads")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory.url)
        let listing = try #require(DirectoryListing(path: link.path), "listed through the link")
        #expect(listing.contains("a.bin"))
        try Data("b".utf8).write(to: directory.file("b.bin"))
        #expect(listing.refresh())
        #expect(listing.contains("b.bin"))

        let other = TemporaryDirectory()
        try FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: other.url)
        #expect(!listing.refresh(), "the link names another directory")
    }
}
#endif
