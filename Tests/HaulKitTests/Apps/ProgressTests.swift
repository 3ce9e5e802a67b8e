import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// ``DownloadManager/progress(for:)``: a Foundation `Progress` that follows a real download, and pauses, resumes
/// and cancels it.
@Suite("Foundation Progress per download")
struct ProgressTests {
    /// Polls `condition` every 10 ms until it holds; fails after `timeout`.
    static func eventually(
        _ what: String, timeout: Duration = .seconds(20), _ condition: () async -> Bool
    ) async throws {
        let start = ContinuousClock.now
        while !(await condition()) {
            if start.duration(to: .now) > timeout { throw HarnessTimeout(what: what) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("its units are the download's bytes: partway while it runs, finished with the file's size")
    func followsBytes() async throws {
        let harness = try await Harness.make()
        let size = 1_500_000
        let url = harness.origin.serve("/p.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let id = try await harness.manager.add(url, paused: true)
        let progress = try await harness.manager.progress(for: id)
        #expect(progress.isPaused && progress.isPausable && progress.isCancellable)
        #expect(progress.kind == .file)
        #expect(progress.userInfo[.fileOperationKindKey] as? Progress.FileOperationKind == .downloading)
        progress.resume()
        try await Self.eventually("partway") {
            progress.completedUnitCount > 0 && progress.completedUnitCount < size
        }
        #expect(progress.totalUnitCount == Int64(size))
        #expect(!progress.isPaused)
        let file = try await harness.manager.wait(for: id)
        try await Self.eventually("finished") { progress.isFinished }
        #expect(progress.completedUnitCount == Int64(size) && progress.fractionCompleted == 1)
        #expect((progress.userInfo[.fileURLKey] as? URL)?.path == file.path)
        expectContent(file, size: size)
        await harness.shutdown()
    }

    @Test("pause() and resume() of the Progress pause and resume the download; a pause in the manager pauses it")
    func pausesThroughProgress() async throws {
        let harness = try await Harness.make()
        let size = 2_000_000
        let url = harness.origin.serve("/pause.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 512 * 1024 }
        let id = try await harness.manager.add(url)
        let progress = try await harness.manager.progress(for: id)
        try await harness.waitForProgress(id, atLeast: 100_000)
        progress.pause()
        try await harness.waitForState(id, .paused)
        progress.resume()
        try await Self.eventually("running again") { await harness.manager.state(of: id) != .paused }
        try await harness.manager.pause(id)
        try await Self.eventually("the progress follows the manager") { progress.isPaused }
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        progress.resume()
        expectContent(try await harness.manager.wait(for: id), size: size)
        // A resume after a pause asked for the rest, not the whole file again.
        #expect(harness.origin.requests(to: "/pause.bin").dropFirst().allSatisfy { $0.range != nil })
        await harness.shutdown()
    }

    @Test("the Progress follows the download's state without passing it back: a late paused does not pause again")
    func followsWithoutEcho() async throws {
        let progress = Progress(totalUnitCount: 10)
        progress.isPausable = true
        let link = ProgressLink(id: 7, progress: progress)
        let calls = Mutex<[String]>([])
        // As `progress(for:)` sets them: a call the link caused is skipped.
        progress.pausingHandler = { if !link.isMirrored(pause: true) { calls.withLock { $0.append("pause") } } }
        progress.resumingHandler = { if !link.isMirrored(pause: false) { calls.withLock { $0.append("resume") } } }
        // The user resumed; the `paused` of the pause before it arrives only now, then the `queued` of the resume.
        link.receive(DownloadEvent(id: 7, change: .status(.paused)))
        #expect(progress.isPaused)
        link.receive(DownloadEvent(id: 7, change: .status(.queued)))
        #expect(!progress.isPaused)
        // Foundation calls the handlers later, on a queue of its own: the user's pause and resume, after those, are
        // the only calls once they have come.
        progress.pause()
        progress.resume()
        try await Self.eventually("the user's calls") { calls.withLock { $0.count } >= 2 }
        try await Task.sleep(for: .milliseconds(200))
        // In either order: Foundation's queue runs them concurrently.
        #expect(calls.withLock { $0 }.sorted() == ["pause", "resume"], "nothing of the manager's passed back to it")
    }

    @Test("a failed download's Progress is paused, and its resume() tries the download again")
    func retriesThroughProgress() async throws {
        let harness = try await Harness.make()
        harness.origin.respond("/later.bin", status: 404)
        let id = try await harness.manager.add(harness.origin.url("/later.bin"))
        let progress = try await harness.manager.progress(for: id)
        try await harness.waitForState(id, .failed)
        try await Self.eventually("paused") { progress.isPaused }
        harness.origin.serve("/later.bin", size: 300_000)
        progress.resume()
        try await Self.eventually("tried again") { await harness.manager.state(of: id) != .failed }
        expectContent(try await harness.manager.wait(for: id), size: 300_000)
        try await Self.eventually("finished") { progress.isFinished }
        await harness.shutdown()
    }

    @Test("cancel() of the Progress cancels the download and deletes its partial data; a removal cancels it")
    func cancelsThroughProgress() async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/cancel.bin", size: 2_000_000)
        harness.origin.setFaults { $0.bytesPerSecond = 256 * 1024 }
        let id = try await harness.manager.add(url)
        let progress = try await harness.manager.progress(for: id)
        try await harness.waitForProgress(id, atLeast: 50_000)
        let part = try #require(await harness.manager.partFile(for: id))
        progress.cancel()
        try await Self.eventually("removed") { await harness.manager.snapshot(id) == nil }
        #expect(!FileManager.default.fileExists(atPath: part.path))

        let other = try await harness.manager.add(harness.origin.serve("/other.bin", size: 2_000_000))
        let followed = try await harness.manager.progress(for: other)
        try await harness.manager.remove(other)
        try await Self.eventually("cancelled") { followed.isCancelled }
        await #expect(throws: DownloadError.self) { try await harness.manager.progress(for: other) }
        await harness.shutdown()
    }
}
