import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Part file locks")
struct PartFileLockTests {
    /// A descriptor of the test's own that holds the part file's lock, as a child process being started holds a copy of
    /// the descriptor of a part file the download just closed.
    static func hold(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_RDWR)
        #expect(descriptor >= 0)
        #expect(FileLock.tryLock(descriptor, start: 0, length: 0))
        return descriptor
    }

    /// A part file holding `content` in a new directory, its lock held by ``hold(_:)``.
    static func heldPartFile(_ content: String) throws -> (directory: TemporaryDirectory, path: String, holder: Int32) {
        let directory = TemporaryDirectory()
        let path = directory.file("a.bin.part").path
        try Data(content.utf8).write(to: URL(fileURLWithPath: path))
        return (directory, path, try hold(path))
    }

    @Test("resuming waits for a lock held for a moment, and opens the file with what it holds")
    func momentaryHolder() async throws {
        let (directory, path, holder) = try Self.heldPartFile("abc")
        _ = directory
        #expect(throws: DownloadError.self) { try PartFile(path: path, mode: .reuseLeftover) }
        // The holder lets go from a thread of its own, 50 ms on: a task would wake as late as the suite's load makes it
        // (in one loaded CI run, after the whole lockWait), and the test would time the pool, not the wait.
        let start = ContinuousClock.now
        Thread.detachNewThread {
            usleep(50_000)
            close(holder)
        }
        let file = try await PartFile.continuing(path)
        #expect(start.duration(to: .now) >= .milliseconds(40))
        #expect(try file.size() == 3)
        file.close()
    }

    @Test("a lock held on is refused after lockWait, and the file is left as it was")
    func lastingHolder() async throws {
        let (directory, path, holder) = try Self.heldPartFile("abcd")
        _ = directory
        defer { close(holder) }
        // Beside it, a task that only sleeps measures how late this process's tasks wake (the whole suite shares two
        // cores): the wait may be late by as much, never by more.
        let lateness = Lateness()
        let start = ContinuousClock.now
        await #expect {
            _ = try await PartFile.continuing(path)
        } throws: { error in
            (error as? DownloadError)?.code == .destinationInUse
        }
        let waited = start.duration(to: .now)
        let late = await lateness.stop()
        #expect(waited >= PartFile.lockWait - .milliseconds(150), "gave up after \(waited)")
        #expect(waited <= PartFile.lockWait + .seconds(2) + late, "gave up after \(waited), tasks woke \(late) late")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("abcd".utf8))
    }

    @Test("a cancelled resume stops waiting for the lock at once")
    func cancelledWait() async throws {
        let (directory, path, holder) = try Self.heldPartFile("x")
        _ = directory
        defer { close(holder) }
        let waiting = Task { try await PartFile.continuing(path) }
        try await Task.sleep(for: .milliseconds(20))
        let lateness = Lateness()
        let cancelled = ContinuousClock.now
        waiting.cancel()
        await #expect(throws: DownloadError.self) { _ = try await waiting.value }
        let stopped = cancelled.duration(to: .now)
        let late = await lateness.stop()
        // Waiting on would take most of a second more; stopping takes at most its current sleep (100 ms).
        #expect(stopped < .milliseconds(400) + late, "stopped \(stopped) after the cancel, tasks woke \(late) late")
    }
}
