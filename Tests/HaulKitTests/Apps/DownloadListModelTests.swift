import Foundation
import HaulTestSupport
import Observation
import Testing

@testable import HaulKit

/// ``DownloadListModel``: the app's downloads screen, driven through real downloads from the test origin.
@Suite("The downloads screen's model")
@MainActor
struct DownloadListModelTests {
    /// Polls `condition` on the main actor every 10 ms until it holds; fails after `timeout`.
    static func eventually(
        _ what: String, timeout: Duration = .seconds(20), _ condition: () -> Bool
    ) async throws {
        let start = ContinuousClock.now
        while !condition() {
            if start.duration(to: .now) > timeout { throw HarnessTimeout(what: what) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("a download appears at once, its row moves with its bytes, and ends completed with its file")
    func followsADownload() async throws {
        let harness = try await Harness.make()
        // About 11 s at 256 KiB/s: the row must be seen partway at least three times, and a loaded machine can leave
        // this loop unscheduled for a second or two at a time (3 s at 1 MiB/s showed it only twice in one CI run).
        let size = 3_000_000
        let url = harness.origin.serve("/a/movie.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 256 * 1024 }
        let model = DownloadListModel(manager: harness.manager)
        let running = Task { await model.run() }
        let id = try #require(await model.add(url))
        #expect(model.rows.map(\.id) == [id])
        #expect(model.row(id)?.name == "movie.bin")
        var changes = 0
        var partway: Set<Int64> = []
        while model.row(id)?.state != .completed {
            // Observation on Linux too: each change of the rows is announced.
            let changed = RowWatch.next(of: model)
            try await Task.sleep(for: .milliseconds(20))
            if changed.happened { changes += 1 }
            if let row = model.row(id), let fraction = row.fraction, fraction > 0, fraction < 1 {
                partway.insert(row.receivedBytes)
            }
        }
        // Progress events move the row, several times a second.
        #expect(partway.count >= 3 && changes > 3, "\(partway.sorted()), \(changes) changes")
        let row = try #require(model.row(id))
        #expect(row.fraction == 1 && row.receivedBytes == Int64(size) && !row.canPause && !row.canResume)
        expectContent(try #require(row.snapshot.file), size: size)
        running.cancel()
        await harness.shutdown()
    }

    @Test("pause, resume and delete act on the download and show in its row")
    func controls() async throws {
        let harness = try await Harness.make()
        let size = 2_000_000
        // About 30 s at 64 KiB/s unless paused: still running when a loaded machine gets to the checks.
        harness.origin.setFaults { $0.bytesPerSecond = 64 * 1024 }
        let model = DownloadListModel(manager: harness.manager)
        let running = Task { await model.run() }
        let id = try #require(await model.add(harness.origin.serve("/c.bin", size: size)))
        try await Self.eventually("bytes") { (model.row(id)?.receivedBytes ?? 0) > 50_000 }
        #expect(model.row(id)?.canPause == true)
        await model.pause(id)
        #expect(model.row(id)?.state == .paused && model.row(id)?.canResume == true)
        #expect(await harness.manager.state(of: id) == .paused)
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        await model.resume(id)
        try await Self.eventually("completed") { model.row(id)?.state == .completed }
        expectContent(harness.directory.file("c.bin"), size: size)

        harness.origin.setFaults { $0.bytesPerSecond = 64 * 1024 }
        let other = try #require(await model.add(harness.origin.serve("/d.bin", size: size)))
        try await Self.eventually("bytes") { (model.row(other)?.receivedBytes ?? 0) > 10_000 }
        let part = try #require(await harness.manager.partFile(for: other))
        await model.delete(other)
        #expect(model.row(other) == nil && model.rows.map(\.id) == [id])
        #expect(!FileManager.default.fileExists(atPath: part.path))
        await model.delete(id, deletingFile: true)
        #expect(model.rows.isEmpty && !FileManager.default.fileExists(atPath: harness.directory.file("c.bin").path))
        #expect(model.lastError == nil)
        await model.pause(DownloadID(rawValue: 999))
        #expect(model.lastError?.code == .unknownDownload)
        running.cancel()
        await harness.shutdown()
    }

    @Test("after the app is gone, a new model on the same database shows the rows and the download continues")
    func survivesARestart() async throws {
        let harness = try await Harness.make()
        let size = 3_000_000
        let url = harness.origin.serve("/r.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let model = DownloadListModel(manager: harness.manager)
        let running = Task { await model.run() }
        let id = try #require(await model.add(url))
        try await Self.eventually("bytes") { (model.row(id)?.receivedBytes ?? 0) > 300_000 }
        running.cancel()
        await harness.manager.shutdown()

        harness.origin.setFaults { $0.bytesPerSecond = nil }
        let reopened = try await harness.reopen()
        let again = DownloadListModel(manager: reopened.manager)
        let following = Task { await again.run() }
        try await Self.eventually("loaded") { again.row(id) != nil }
        try await Self.eventually("completed") { again.row(id)?.state == .completed }
        expectContent(harness.directory.file("r.bin"), size: size)
        let resumed = try #require(harness.origin.requests(to: "/r.bin").last)
        #expect(resumed.range != nil && resumed.range != "bytes=0-", "continued, not started over")
        following.cancel()
        await reopened.manager.shutdown()
        await harness.origin.stop()
    }
}

/// Whether the rows changed after ``next(of:)`` began to watch them.
@MainActor
final class RowWatch {
    private(set) var happened = false

    /// Watches `model.rows` once, with `withObservationTracking`.
    static func next(of model: DownloadListModel) -> RowWatch {
        let observations = RowWatch()
        withObservationTracking {
            _ = model.rows
        } onChange: {
            Task { @MainActor in observations.happened = true }
        }
        return observations
    }
}
