import Foundation
import GRDB
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The defects found by reading the code and by the adversarial origin: each would have ended a download with wrong
/// bytes, a crash, a hang or a leak. One connection and four; one test at a time (see `FailurePolicyTests`).
@Suite("Correctness defects", .serialized)
struct CorrectnessDefectTests {
    private func complete(
        _ harness: Harness, _ url: URL, connections: Int, to destination: DownloadDestination? = nil
    )
        async throws -> URL
    {
        let manager = harness.manager
        let id = try await manager.add(url, to: destination, options: .init(connections: connections))
        return try await withDeadline(.seconds(120), "download \(id)") { try await manager.wait(for: id) }
    }

    @Test("a 206 that does not tell the size (bytes 0-N/*) is never taken as the whole file", arguments: [1, 4])
    func unknownTotal(connections: Int) async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 128 * 1024 }
        let size = 1_000_003
        let url = harness.origin.serve("/secretive.bin", size: size)
        harness.origin.setFaults { $0.hidesTotal = true }
        let file = try await complete(harness, url, connections: connections)
        expectContent(file, size: size)
        await harness.shutdown()
    }

    @Test("a file of exactly the first bounded request's size, size never told, ends on the 416", arguments: [4])
    func unknownTotalExactBound(connections: Int) async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 128 * 1024 }
        let size = 256 * 1024
        let url = harness.origin.serve("/exact.bin", size: size)
        harness.origin.setFaults { $0.hidesTotal = true }
        let file = try await complete(harness, url, connections: connections)
        expectContent(file, size: size)
        await harness.shutdown()
    }

    @Test(
        "an empty resource is a valid download (416 bytes */0 to a range, or 200 with no body)",
        arguments: [(1, false), (4, false), (1, true), (4, true)])
    func emptyFile(connections: Int, ignoresRange: Bool) async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/empty.txt", size: 0)
        harness.origin.setFaults { $0.ignoresRange = ignoresRange }
        let file = try await complete(harness, url, connections: connections)
        #expect(FileManager.default.contents(atPath: file.path) == Data())
        #expect(!FileManager.default.fileExists(atPath: file.path + ".part"))
        await harness.shutdown()
    }

    @Test("two managers on different databases never write one part file: the second is refused", arguments: [1, 4])
    func exclusivePartFile(connections: Int) async throws {
        let first = try await Harness.make { $0.minimumSegmentSize = 128 * 1024 }
        let size = 2 * 1024 * 1024
        let url = first.origin.serve("/shared.bin", size: size)
        first.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let target = TemporaryDirectory()
        let destination = DownloadDestination.file(target.file("shared.bin"))
        let id = try await first.manager.add(url, to: destination, options: .init(connections: connections))
        try await first.waitForProgress(id, atLeast: 64 * 1024)
        let second = try await Harness.make(origin: first.origin)
        let other = try await second.manager.add(url, to: destination, options: .init(connections: connections))
        await #expect(throws: DownloadError.self) { try await second.manager.wait(for: other) }
        #expect(await second.manager.snapshot(other)?.lastError?.code == .destinationInUse)
        first.origin.setFaults { $0.bytesPerSecond = nil }
        expectContent(try await first.manager.wait(for: id), size: size)
        await second.manager.shutdown()
        await first.shutdown()
    }

    @Test("the same destination twice in one batch is rejected before anything is added")
    func duplicateDestinations() async throws {
        let harness = try await Harness.make()
        let file = DownloadDestination.file(harness.directory.file("same.bin"))
        let a = harness.origin.url("/a")
        let b = harness.origin.url("/b")
        await #expect(throws: DownloadError.self) {
            try await harness.manager.add(contentsOf: [(a, file, .init()), (b, file, .init())])
        }
        #expect(await harness.manager.snapshots().isEmpty)
        await harness.shutdown()
    }

    @Test(
        "a 250-byte server-chosen name fits with its .part.segments sibling, and remove deletes everything",
        arguments: [1, 4])
    func longName(connections: Int) async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 128 * 1024 }
        let name = String(repeating: "n", count: 246) + ".bin"
        var resource = TestOrigin.Resource(size: 1024 * 1024)
        resource.contentDisposition = "attachment; filename=\"\(name)\""
        let url = harness.origin.serve("/long", resource)
        harness.origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
        let id = try await harness.manager.add(url, options: .init(connections: connections))
        try await harness.waitForProgress(id, atLeast: 128 * 1024)
        try await harness.manager.pause(id)
        let partFiles = harness.directory.entries().filter { $0.hasSuffix(".part") }
        #expect(partFiles.count == 1)
        for entry in harness.directory.entries() { #expect(entry.utf8.count <= 255, "\(entry)") }
        try await harness.manager.resume(id)
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        let file = try await withDeadline(.seconds(120)) { try await harness.manager.wait(for: id) }
        expectContent(file, size: 1024 * 1024)
        #expect(file.lastPathComponent.hasSuffix(".bin"))
        #expect(file.lastPathComponent.utf8.count + ".part.segments".utf8.count <= 255)
        try await harness.manager.remove(id, deletingFile: true)
        #expect(harness.directory.entries() == ["state"])
        await harness.shutdown()
    }

    @Test(
        "a checkpoint whose sync fails (EIO) fails the download; the resume trusts only synced bytes",
        arguments: [1, 4])
    func syncFailure(connections: Int) async throws {
        let failures = FailOnce()
        let directory = TemporaryDirectory()
        let harness = try await Harness.make(directory: directory) {
            $0.checkpointInterval = .milliseconds(100)
            $0.minimumSegmentSize = 128 * 1024
            $0.faults = FaultInjection(checkpointSyncErrno: { failures.take() ? EIO : nil })
        }
        let size = 2 * 1024 * 1024
        let url = harness.origin.serve("/eio.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let id = try await harness.manager.add(url, options: .init(connections: connections))
        try await harness.waitForProgress(id, atLeast: 200 * 1024)
        failures.arm()
        await #expect(throws: DownloadError.self) {
            try await withDeadline(.seconds(120)) { try await harness.manager.wait(for: id) }
        }
        let error = try #require(await harness.manager.snapshot(id)?.lastError)
        #expect(error.code == .fileSystem, "\(error)")
        #expect(error.summary.contains("sync"))
        await harness.manager.shutdown()
        let store = try SQLiteDownloadStore(path: directory.file("state/haul.sqlite").path)
        #expect(try await store.fetch(id)?.transfer.bootID == nil, "the unsynced tail is no longer trusted")
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        let reopened = try await harness.reopen()
        try await reopened.manager.resume(id)
        expectContent(try await withDeadline(.seconds(120)) { try await reopened.manager.wait(for: id) }, size: size)
        await reopened.shutdown()
    }

    @Test("removing a running download whose part file cannot be deleted says so")
    func removeFailureIsReported() async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/stuck-file.bin", size: 4 * 1024 * 1024)
        harness.origin.setFaults { $0.bytesPerSecond = 512 * 1024 }
        let id = try await harness.manager.add(url)
        try await harness.waitForProgress(id, atLeast: 64 * 1024)
        // Something the engine cannot unlink stands where the part file was.
        let part = harness.directory.file("stuck-file.bin.part").path
        try FileManager.default.moveItem(atPath: part, toPath: part + ".moved")
        try FileManager.default.createDirectory(atPath: part + "/inside", withIntermediateDirectories: true)
        await #expect(throws: DownloadError.self) { try await harness.manager.remove(id) }
        #expect(await harness.manager.snapshot(id)?.state == .paused, "a download whose file is still there is kept")
        await harness.shutdown()
    }

    @Test("a second job for one download never starts: a resume racing a take-over runs it once")
    func oneJobPerDownload() async throws {
        let first = try await Harness.make()
        let size = 2 * 1024 * 1024
        let url = first.origin.serve("/once.bin", size: size)
        first.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let id = try await first.manager.add(url)
        try await first.waitForProgress(id, atLeast: 256 * 1024)
        // Another manager (another process, say) sees it running elsewhere.
        let second = try await Harness.make(origin: first.origin, directory: first.directory) {
            $0.externalChangeInterval = .milliseconds(50)
        }
        // The first ends without pausing (killed, in effect); the second resumes it while its watcher takes over.
        let events = await second.manager.events()
        await first.manager.shutdown()
        try await second.manager.resume(id)
        try await Task.sleep(for: .milliseconds(200))
        try await second.manager.resume(id)
        first.origin.setFaults { $0.bytesPerSecond = nil }
        expectContent(try await withDeadline(.seconds(120)) { try await second.manager.wait(for: id) }, size: size)
        var starts = 0
        for await event in events where event.id == id {
            if case .status(.running) = event.change { starts += 1 }
            if case .status(.completed) = event.change { break }
        }
        #expect(starts == 1, "\(starts) jobs started")
        await second.shutdown()
    }

    @Test("a damaged row is shown as damaged, can be removed, and the others keep working")
    func damagedRow() async throws {
        let directory = TemporaryDirectory()
        let harness = try await Harness.make(directory: directory)
        let good = harness.origin.serve("/good.bin", size: 10_000)
        let bad = try await harness.manager.add(harness.origin.url("/bad.bin"), options: .init())
        try await harness.manager.pause(bad)
        let id = try await harness.manager.add(good)
        _ = try await harness.manager.wait(for: id)
        await harness.manager.shutdown()
        let pool = try DatabasePool(path: directory.file("state/haul.sqlite").path)
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE download SET createdAt = 'yesterday', totalBytes = 'many', options = '{' WHERE id = ?",
                arguments: [bad.rawValue])
        }
        try pool.close()
        let reopened = try await harness.reopen()
        let snapshot = try #require(await reopened.manager.snapshot(bad))
        #expect(snapshot.state == .failed)
        #expect(snapshot.lastError?.code == .damagedRecord)
        #expect(await reopened.manager.snapshot(id)?.state == .completed)
        await #expect(throws: DownloadError.self) { try await reopened.manager.resume(bad) }
        await reopened.manager.resumeAll()
        try await reopened.manager.remove(bad)
        #expect(await reopened.manager.snapshot(bad) == nil)
        let again = try await harness.reopen()
        #expect(await again.manager.snapshots().map(\.id) == [id])
        await again.manager.shutdown()
        await reopened.shutdown()
    }

    @Test("a database written by a newer Haul is refused with a clear message")
    func newerDatabase() async throws {
        let directory = TemporaryDirectory()
        let harness = try await Harness.make(directory: directory)
        await harness.manager.shutdown()
        let pool = try DatabasePool(path: directory.file("state/haul.sqlite").path)
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
        }
        try pool.close()
        do {
            _ = try await harness.reopen()
            Issue.record("a newer database was opened")
        } catch let error as DownloadError {
            #expect(error.code == .stateDatabase)
            #expect(error.summary.contains("newer version of Haul"), "\(error)")
        }
        await harness.origin.stop()
    }

    @Test("the state directory is private (0700) and the database 0600")
    func privateState() async throws {
        let directory = TemporaryDirectory()
        let harness = try await Harness.make(directory: directory)
        _ = try await harness.manager.add(
            harness.origin.url("/x"), options: .init(headers: [.init(name: "Authorization", value: "Bearer s3cret")]))
        func mode(_ name: String) -> mode_t? {
            var info = stat()
            guard stat(directory.file(name).path, &info) == 0 else { return nil }
            return info.st_mode & 0o777
        }
        #expect(mode("state") == 0o700)
        #expect(mode("state/haul.sqlite") == 0o600)
        #expect(mode("state/haul.sqlite-wal").map { $0 == 0o600 } ?? true)
        #expect(mode("state/haul.sqlite-locks") == 0o600)
        await harness.shutdown()
    }

    @Test(
        "credential headers are masked wherever they are shown",
        arguments: [
            ("Authorization", "Bearer abc.def", "Authorization: Bearer ***"),
            ("Cookie", "session=1", "Cookie: ***"),
            ("X-Api-Key", "k", "X-Api-Key: ***"),
            ("X-Auth-Token", "t", "X-Auth-Token: ***"),
            ("Accept", "text/plain", "Accept: text/plain"),
        ])
    func maskedHeaders(name: String, value: String, shown: String) {
        #expect(HTTPHeaderField(name: name, value: value).description == shown)
    }

    @Test("control characters from a server never reach an error message")
    func controlCharacters() async throws {
        let harness = try await Harness.make { $0.retry.maxRestarts = 1 }
        let url = harness.origin.serve("/evil", size: 10)
        // NIO refuses C0 controls in a header; C1 ones (U+009B is CSI to many terminals) pass as UTF-8 text.
        let evil = (206, [("Content-Range", "bytes \u{9B}2J\u{9D}0;pwned\u{9C}0-9/10")])
        harness.origin.setFaults { $0.scripted = [evil, evil] }
        let id = try await harness.manager.add(url)
        await #expect(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
        let error = try #require(await harness.manager.snapshot(id)?.lastError)
        #expect(!ControlCharacters.occur(in: error.description), "\(error.description.debugDescription)")
        #expect(error.summary.contains("bytes 2J0;pwned0-9/10"), "\(error.summary)")
        await harness.shutdown()
    }

    @Test(
        "a gzip body sent although identity was asked is decoded (resumed from 0 after a cut)",
        arguments: [1, 4])
    func unrequestedGzip(connections: Int) async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 128 * 1024 }
        let size = 700_001
        var resource = TestOrigin.Resource(size: size)
        resource.gzipped = true
        let url = harness.origin.serve("/page.html", resource)
        harness.origin.setFaults {
            $0.cutAfter = 300_000
            $0.cutTimes = 2
        }
        let file = try await complete(harness, url, connections: connections)
        expectContent(file, size: size)
        let requests = harness.origin.requests(to: "/page.html")
        // Decoded bytes cannot be resumed by range: after the cut, the decoding request starts from 0 again.
        #expect(requests.last?.range == nil)
        await harness.shutdown()
    }
}

/// An injected failure that fires once, after it is armed.
final class FailOnce: Sendable {
    private let state = Mutex<(armed: Bool, fired: Bool)>((false, false))
    func arm() { state.withLock { $0.armed = true } }
    func take() -> Bool {
        state.withLock { state in
            guard state.armed, !state.fired else { return false }
            state.fired = true
            return true
        }
    }
}
