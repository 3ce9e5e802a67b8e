import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("A file already at the destination")
struct ExistingFileTests {
    static let mine = Data("the user's own file\n".utf8)

    /// Adds `name` (of `size` bytes, each response lasting a second and a half, with `options`, or into `file`) and
    /// returns once a third of it arrived, while its body is still on its way (held in memory if it is small).
    static func arriving(
        _ harness: Harness, _ name: String, size: Int, options: DownloadOptions = .init(), into file: URL? = nil
    ) async throws -> DownloadID {
        let url = harness.origin.serve("/\(name)", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = size * 2 / 3 }
        let id =
            if let file { try await harness.manager.add(url, to: .file(file), options: options) } else {
                try await harness.manager.add(url, options: options)
            }
        try await harness.waitForProgress(id, atLeast: Int64(size / 3))
        return id
    }

    /// Adds `name` (of `size` bytes) and returns it once completed, with its file.
    static func completed(_ harness: Harness, _ name: String, size: Int) async throws -> (id: DownloadID, file: URL) {
        let id = try await harness.manager.add(harness.origin.serve("/\(name)", size: size))
        return (id, try await harness.manager.wait(for: id))
    }

    /// Puts the user's file at `name` in the harness directory.
    static func place(_ harness: Harness, _ name: String) throws -> URL {
        let url = harness.directory.url.appendingPathComponent(name)
        try mine.write(to: url)
        return url
    }

    @Test("given a file: replaced by default and with replace, kept with keep (nothing fetched), renamed with rename")
    func fileDestination() async throws {
        let harness = try await Harness.make()
        for policy in [ExistingFilePolicy.automatic, .replace, .keep, .rename] {
            let name = "\(policy.rawValue).bin"
            let existing = try Self.place(harness, name)
            let url = harness.origin.serve("/\(name)", size: 30_000)
            let id = try await harness.manager.add(url, to: .file(existing), options: .init(existingFile: policy))
            let file = try await harness.manager.wait(for: id)
            switch policy {
            case .automatic, .replace, .replaceIfNewer:
                #expect(file == existing)
                expectContent(existing, size: 30_000)
            case .keep:
                #expect(file == existing)
                #expect(try Data(contentsOf: existing) == Self.mine)
                #expect(harness.origin.requests(to: "/\(name)").isEmpty)
                #expect(await harness.manager.snapshot(id)?.state == .completed)
                #expect(await harness.manager.snapshot(id)?.totalBytes == Int64(Self.mine.count))
            case .rename:
                #expect(file.lastPathComponent == "rename (1).bin", "\(file)")
                #expect(try Data(contentsOf: existing) == Self.mine)
                expectContent(file, size: 30_000)
            }
        }
        await harness.shutdown()
    }

    @Test("into a directory: renamed by default, replaced with replace, kept with keep")
    func directoryDestination() async throws {
        let harness = try await Harness.make()
        for policy in [ExistingFilePolicy.automatic, .replace, .keep] {
            let name = "d-\(policy.rawValue).bin"
            let existing = try Self.place(harness, name)
            let url = harness.origin.serve("/\(name)", size: 30_000)
            let id = try await harness.manager.add(url, options: .init(existingFile: policy))
            let file = try await harness.manager.wait(for: id)
            switch policy {
            case .automatic, .rename:
                #expect(file.lastPathComponent == "d-automatic (1).bin", "\(file)")
                #expect(try Data(contentsOf: existing) == Self.mine)
                expectContent(file, size: 30_000)
            case .replace, .replaceIfNewer:
                #expect(file == existing)
                expectContent(existing, size: 30_000)
            case .keep:
                #expect(file == existing)
                #expect(try Data(contentsOf: existing) == Self.mine)
                #expect(!FileManager.default.fileExists(atPath: existing.path + ".part"))
            }
        }
        await harness.shutdown()
    }
}

extension ExistingFileTests {
    @Test("a file kept by keep, never fetched, is fetched and replaced when the download is added again with replace")
    func keptThenOverwritten() async throws {
        let harness = try await Harness.make()
        let existing = try Self.place(harness, "kept.bin")
        let url = harness.origin.serve("/kept.bin", size: 30_000)
        let id = try await harness.manager.add(url, options: .init(existingFile: .keep))
        #expect(try await harness.manager.wait(for: id) == existing)
        #expect(try Data(contentsOf: existing) == Self.mine)
        // Without a policy the kept file stays the download's (the stored keep stays too).
        #expect(try await harness.manager.add(url) == id)
        #expect(try await harness.manager.wait(for: id) == existing)
        #expect(try Data(contentsOf: existing) == Self.mine)
        // Asked to overwrite: the server's copy replaces it.
        #expect(try await harness.manager.add(url, options: .init(existingFile: .replace)) == id)
        #expect(try await harness.manager.wait(for: id) == existing)
        expectContent(existing, size: 30_000)
        #expect(await harness.manager.snapshot(id)?.sha256 == TestContent.sha256(size: 30_000))
        // Fetched and unchanged: a later overwrite has nothing to do.
        let requests = harness.origin.requests(to: "/kept.bin").count
        #expect(try await harness.manager.add(url, options: .init(existingFile: .replace)) == id)
        #expect(try await harness.manager.wait(for: id) == existing)
        #expect(harness.origin.requests(to: "/kept.bin").count == requests)
        await harness.shutdown()
    }
}

@Suite("Timestamping (-N)")
struct TimestampingTests {
    /// The server's copy is from 2023-11-14 (`TestOrigin.Resource.lastModified` for version 0).
    static let serverTime = Date(timeIntervalSince1970: 1_700_000_000)

    @Test("a file newer than the server's copy is kept; an older one is replaced and gets the server's time")
    func replaceIfNewer() async throws {
        let harness = try await Harness.make()
        for (index, destination) in ["file", "directory"].enumerated() {
            for (age, fileTime) in [("newer", Self.serverTime + 3600), ("older", Self.serverTime - 3600)] {
                let name = "n-\(destination)-\(age).bin"
                let existing = try ExistingFileTests.place(harness, name)
                try FileManager.default.setAttributes([.modificationDate: fileTime], ofItemAtPath: existing.path)
                let url = harness.origin.serve("/\(name)", size: 200_000 + index)
                let id = try await harness.manager.add(
                    url, to: destination == "file" ? .file(existing) : nil,
                    options: .init(connections: 2, existingFile: .replaceIfNewer))
                #expect(try await harness.manager.wait(for: id) == existing)
                let requests = harness.origin.requests(to: "/\(name)")
                // Given a file, the name is known: the server is asked conditionally (the origin ignores it, as many
                // do, and the Last-Modified decides). Into a directory the name comes with the answer.
                let asked = requests.first?.header("If-Modified-Since")
                #expect(asked == (destination == "file" ? HTTPDate.format(fileTime) : nil), "\(name)")
                if age == "newer" {
                    #expect(try Data(contentsOf: existing) == ExistingFileTests.mine, "\(name)")
                    #expect(requests.count == 1, "\(name): \(requests.count) requests")
                } else {
                    expectContent(existing, size: 200_000 + index)
                    let modified = try FileManager.default.attributesOfItem(atPath: existing.path)[.modificationDate]
                    #expect(modified as? Date == Self.serverTime, "\(name)")
                }
            }
        }
        await harness.shutdown()
    }
}

extension ExistingFileTests {
    @Test(
        "a file that appears at the destination while the download runs is never replaced unless asked: the download fails and keeps its bytes; once the file is moved away, a resume completes it",
        arguments: [30_000, 600_000], [1, 4])
    func fileAppearsMidDownload(size: Int, connections: Int) async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 128 * 1024 }
        let name = "appears-\(size)-\(connections).bin"
        // The file appears at its name while the body arrives.
        let id = try await Self.arriving(harness, name, size: size, options: .init(connections: connections))
        let destination = harness.directory.url.appendingPathComponent(name)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        try Self.mine.write(to: destination)
        await #expect(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
        #expect(try Data(contentsOf: destination) == Self.mine, "the user's file replaced")
        let snapshot = await harness.manager.snapshot(id)
        #expect(snapshot?.state == .failed)
        #expect(snapshot?.lastError?.code == .destinationInUse, "\(String(describing: snapshot?.lastError))")
        let requests = harness.origin.requests(to: "/\(name)").count

        try FileManager.default.removeItem(at: destination)
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        try await harness.manager.resume(id)
        #expect(try await harness.manager.wait(for: id) == destination)
        expectContent(destination, size: size)
        // Recorded as the file in place: not taken for one changed since.
        #expect(await harness.manager.snapshot(id)?.fileChange == nil)
        #expect(await harness.manager.checkCompletedFile(id) == .complete)
        // A part file's bytes were kept: put in place as they were, nothing fetched again. A body held in memory
        // (under 256 KiB) is fetched again.
        let again = harness.origin.requests(to: "/\(name)").count - requests
        #expect(size > 256 * 1024 ? again == 0 : again == 1, "fetched again \(again) times")
        await harness.shutdown()
    }
}

extension ExistingFileTests {
    @Test(
        "a file that appears while the download runs is replaced when asked: with replace, and by default for a file the user named",
        arguments: [true, false])
    func fileAppearsAndIsReplaced(named: Bool) async throws {
        let harness = try await Harness.make()
        let name = "replaced-\(named).bin"
        let size = 600_000
        let destination = harness.directory.url.appendingPathComponent(name)
        let id =
            named
            ? try await Self.arriving(harness, name, size: size, into: destination)
            : try await Self.arriving(harness, name, size: size, options: .init(existingFile: .replace))
        try Self.mine.write(to: destination)
        #expect(try await harness.manager.wait(for: id) == destination)
        expectContent(destination, size: size)
        await harness.shutdown()
    }
}

extension ExistingFileTests {
    @Test(
        "a completed download whose file was replaced since (a new file at its name, as an editor saves) is fetched again and replaces it"
    )
    func changedCompletedFileIsReplaced() async throws {
        let harness = try await Harness.make()
        for size in [40_000, 600_000] {
            let (id, file) = try await Self.completed(harness, "edited-\(size).bin", size: size)
            // Written to a new file and renamed over it: another inode at the name.
            try Data(repeating: 0x41, count: size + 10).write(to: file, options: .atomic)
            #expect(await harness.manager.checkCompletedFile(id) == .reopened)
            #expect(try await harness.manager.wait(for: id) == file)
            expectContent(file, size: size)
            #expect(await harness.manager.snapshot(id)?.fileChange == nil)
        }
        await harness.shutdown()
    }
}

extension ExistingFileTests {
    @Test(
        "a file that appears while a completed download is fetched again, or a small one's of the very size, is not taken for the download's own: not replaced, nor at a resume, nor after a restart"
    )
    func appearedFileIsNeverOwn() async throws {
        var harness = try await Harness.make()
        // A completed download whose file was deleted, fetched again.
        let size = 600_000
        let (again, file) = try await Self.completed(harness, "again.bin", size: size)
        try FileManager.default.removeItem(at: file)
        harness.origin.setFaults { $0.bytesPerSecond = size * 2 / 3 }
        #expect(await harness.manager.checkCompletedFile(again) == .reopened)
        try await harness.waitForProgress(again, atLeast: Int64(size / 3))
        try Self.mine.write(to: file)
        // A small file (held in memory), and a file of its very size, other bytes, at its name: from an origin of its
        // own, whose response sends its first 16 KiB at once and the rest after more than 3 s.
        let smallSize = 30_000
        let slow = try await TestOrigin.start()
        slow.setFaults { $0.bytesPerSecond = smallSize / 6 }
        let small = try await harness.manager.add(slow.serve("/same-size.bin", size: smallSize))
        try await harness.waitForProgress(small, atLeast: Int64(smallSize / 3))
        let smallFile = harness.directory.url.appendingPathComponent("same-size.bin")
        let sameSize = Data(repeating: 0x42, count: smallSize)
        try sameSize.write(to: smallFile)
        for id in [again, small] {
            await #expect(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
        }
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        slow.setFaults { $0.bytesPerSecond = nil }
        for round in ["resumed", "restarted"] {
            if round == "restarted" {
                await harness.manager.shutdown()
                harness = try await harness.reopen()
            }
            for id in [again, small] {
                try await harness.manager.resume(id)
                await #expect(throws: DownloadError.self, "\(round)") { try await harness.manager.wait(for: id) }
            }
            #expect(try Data(contentsOf: file) == Self.mine, "\(round)")
            #expect(try Data(contentsOf: smallFile) == sameSize, "\(round)")
        }
        await harness.shutdown()
        await slow.stop()
    }
}

extension ExistingFileTests {
    @Test(
        "a completed download fetched again after its file was deleted takes no file put at its name while it is paused for its own: refused at the resume, it completes from its part file once the file is moved away"
    )
    func appearedWhilePausedIsNotOwn() async throws {
        let harness = try await Harness.make()
        let size = 600_000
        let (id, file) = try await Self.completed(harness, "paused-again.bin", size: size)
        try FileManager.default.removeItem(at: file)
        // Its response stops half-way until it is paused.
        harness.origin.holdFirstResponse(at: size / 2)
        #expect(await harness.manager.checkCompletedFile(id) == .reopened)
        #expect(try await waitForFile(file.path + ".part", atLeast: size / 4))
        try await harness.manager.pause(id)
        try await harness.waitForState(id, .paused)
        try Self.mine.write(to: file)
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        try await harness.manager.resume(id)
        await #expect(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
        #expect(try Data(contentsOf: file) == Self.mine, "the user's file replaced")
        let error = await harness.manager.snapshot(id)?.lastError
        #expect(error?.code == .destinationInUse, "\(String(describing: error))")
        let requests = harness.origin.requests(to: "/paused-again.bin").count

        try FileManager.default.removeItem(at: file)
        try await harness.manager.resume(id)
        #expect(try await harness.manager.wait(for: id) == file)
        expectContent(file, size: size)
        #expect(harness.origin.requests(to: "/paused-again.bin").count == requests, "its part file fetched again")
        await harness.shutdown()
    }
}

extension ExistingFileTests {
    @Test(
        "a completed file replaced by another of the same size and time (as cp -p leaves it) is read when the download runs again, and fetched again since its bytes differ"
    )
    func sameSizeAndTimeIsRead() async throws {
        let harness = try await Harness.make()
        let size = 40_000
        let (id, file) = try await Self.completed(harness, "copied.bin", size: size)
        var completed = stat()
        #expect(lstat(file.path, &completed) == 0)
        // Another inode, other bytes, the very size and time (to the nanosecond).
        try Data(repeating: 0x44, count: size).write(to: file, options: .atomic)
        #if canImport(Darwin)
        var times = [completed.st_atimespec, completed.st_mtimespec]
        #else
        var times = [completed.st_atim, completed.st_mtim]
        #endif
        #expect(utimensat(AT_FDCWD, file.path, &times, 0) == 0)
        #expect(await harness.manager.checkCompletedFile(id) == .reopened)
        #expect(try await harness.manager.wait(for: id) == file)
        expectContent(file, size: size)
        #expect(harness.origin.requests(to: "/copied.bin").count == 2)
        await harness.shutdown()
    }

    @Test(
        "a file of the download's very size at its name, after its placement was refused and its part file deleted, is not taken for the download: the resume fetches it again and leaves the file"
    )
    func sameSizeFileAfterPartDeleted() async throws {
        let harness = try await Harness.make()
        let size = 600_000
        let name = "part-deleted.bin"
        let id = try await Self.arriving(harness, name, size: size)
        let destination = harness.directory.url.appendingPathComponent(name)
        let theirs = Data(repeating: 0x43, count: size)
        try theirs.write(to: destination)
        await #expect(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
        try FileManager.default.removeItem(atPath: destination.path + ".part")
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        let requests = harness.origin.requests(to: "/\(name)").count
        try await harness.manager.resume(id)
        await #expect(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
        #expect(try Data(contentsOf: destination) == theirs, "the user's file replaced")
        #expect(await harness.manager.snapshot(id)?.state == .failed)
        #expect(harness.origin.requests(to: "/\(name)").count == requests + 1, "not fetched again")
        await harness.shutdown()
    }
}
