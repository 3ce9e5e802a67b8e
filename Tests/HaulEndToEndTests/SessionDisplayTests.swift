import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit
@testable import haul

@Suite("The session's display of events")
struct SessionDisplayTests {
    /// A quiet display over a manager of its own (only its ticks ask the manager anything).
    static func display(
        in directory: TemporaryDirectory, followsNewDownloads: Bool = false
    ) async throws -> (SessionDisplay, DownloadManager) {
        let manager = try await manager(in: directory)
        return (
            SessionDisplay(mode: .plain(quiet: true), manager: manager, followsNewDownloads: followsNewDownloads),
            manager
        )
    }

    /// A display whose output records what it is handed, over a manager of its own.
    static func recordingDisplay(
        in directory: TemporaryDirectory, followsNewDownloads: Bool
    ) async throws -> (SessionDisplay, RecordingOutput, DownloadManager) {
        let manager = try await manager(in: directory)
        let output = RecordingOutput()
        return (
            SessionDisplay(output: output, manager: manager, followsNewDownloads: followsNewDownloads), output, manager
        )
    }

    static func manager(in directory: TemporaryDirectory) async throws -> DownloadManager {
        try await DownloadManager(
            configuration: .init(downloadDirectory: directory.url, databaseURL: directory.file("state/haul.sqlite")))
    }

    static func event(_ id: Int64, _ change: DownloadEvent.Change) -> DownloadEvent {
        DownloadEvent(id: DownloadID(rawValue: id), change: change)
    }

    static func state(_ display: SessionDisplay, _ id: Int64) -> DownloadState? {
        display.entries.first { $0.id == DownloadID(rawValue: id) }?.state
    }

    @Test("events that arrive before the downloads are known are applied once they are; others' are ignored")
    func keepsEarlyEvents() async throws {
        let directory = TemporaryDirectory()
        let (display, manager) = try await Self.display(in: directory)
        let file = directory.file("one.bin")
        display.receive(Self.event(1, .status(.running)))
        display.receive(Self.event(1, .progress(DownloadProgress(receivedBytes: 10, expectedBytes: 10))))
        display.receive(Self.event(1, .status(.completed(file: file))))
        display.receive(Self.event(2, .status(.running)))
        display.follow([TransferTableTests.snapshot(1), TransferTableTests.snapshot(3)])
        #expect(Self.state(display, 1) == .queued, "not applied before the display goes live")
        display.goLive()
        #expect(Self.state(display, 1) == .completed)
        #expect(display.entries.first?.file == file)
        #expect(display.entries.map(\.id) == [1, 3], "download 2 is not followed")
        display.receive(Self.event(3, .status(.running)))
        #expect(Self.state(display, 3) == .running, "applied at once when live")
        await manager.shutdown()
    }

    @Test("before the downloads are known, only the newest events are kept")
    func boundsEarlyEvents() async throws {
        let directory = TemporaryDirectory()
        let (display, manager) = try await Self.display(in: directory)
        display.receive(Self.event(1, .status(.running)))
        let count = 3 * SessionDisplay.earlyEventLimit
        for received in 1...count {
            display.receive(
                Self.event(1, .progress(DownloadProgress(receivedBytes: Int64(received), expectedBytes: nil))))
        }
        display.follow([TransferTableTests.snapshot(1)])
        display.goLive()
        #expect(Self.state(display, 1) == .queued, "the oldest event, running, was dropped")
        #expect(display.entries.first?.received == Int64(count))
        await manager.shutdown()
    }

    /// Records what the display hands its output: the download and the kind of change, in order.
    final class RecordingOutput: SessionOutput, @unchecked Sendable {
        // Called under the display's lock only (see `SessionOutput`).
        var changes: [(id: Int64, kind: String)] = []

        func changed(_ entry: TransferEntry, by change: DownloadEvent.Change, in table: TransferTable) {
            let kind: String
            switch change {
            case .added: kind = "added"
            case .status(.queued): kind = "queued"
            case .status(.running): kind = "running"
            case .status(.completed): kind = "completed"
            case .status: kind = "another status"
            default: kind = "other"
            }
            changes.append((entry.id.rawValue, kind))
        }
        func tick(_ table: TransferTable) {}
        func finish(_ table: TransferTable, outcome: SessionOutcome) {}
    }

    @Test("haul get announces every download of a long list once, first, however many events its adding made")
    func announcesEveryDownloadOfALongList() async throws {
        let directory = TemporaryDirectory()
        let (display, output, manager) = try await Self.recordingDisplay(in: directory, followsNewDownloads: false)
        // What adding a list sends, two events each (as `DownloadManager.add(contentsOf:)`), far more than the early
        // events kept; then the first download runs and completes before the display is live.
        let count = Int64(3 * SessionDisplay.earlyEventLimit)
        for id in 1...count {
            display.receive(Self.event(id, .added(TransferTableTests.snapshot(id))))
            display.receive(Self.event(id, .status(.queued)))
        }
        display.receive(Self.event(1, .status(.running)))
        display.receive(Self.event(1, .status(.completed(file: directory.file("1.bin")))))
        display.follow((1...count).map { TransferTableTests.snapshot($0) })
        display.goLive()
        display.receive(Self.event(2, .status(.running)))
        display.receive(Self.event(2, .added(TransferTableTests.snapshot(2))))

        let added = output.changes.filter { $0.kind == "added" }.map(\.id)
        #expect(added == Array(1...count), "one announcement per download, in order")
        #expect(!output.changes.contains { $0.kind == "queued" }, "the queued that came with each addition is not news")
        #expect(output.changes.filter { $0.id == 1 }.map(\.kind) == ["added", "running", "completed"])
        #expect(output.changes.filter { $0.id == 2 }.map(\.kind) == ["added", "running"])
        #expect(Self.state(display, 1) == .completed)
        await manager.shutdown()
    }

    @Test("haul run announces the downloads added while it runs, from their events")
    func runAnnouncesNewDownloads() async throws {
        let directory = TemporaryDirectory()
        let (display, output, manager) = try await Self.recordingDisplay(in: directory, followsNewDownloads: true)
        display.follow([TransferTableTests.snapshot(1)])
        display.goLive()
        display.receive(Self.event(2, .added(TransferTableTests.snapshot(2))))
        display.receive(Self.event(2, .status(.queued)))
        #expect(output.changes.map(\.id) == [2, 2], "the download it began with is not announced; the new one is")
        #expect(output.changes.map(\.kind) == ["added", "queued"])
        await manager.shutdown()
    }

    @Test("events from many tasks at once are all applied")
    func appliesConcurrentEvents() async throws {
        let directory = TemporaryDirectory()
        let (display, manager) = try await Self.display(in: directory, followsNewDownloads: true)
        display.goLive()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<200 {
                        let id = Int64(task * 1000 + index)
                        display.receive(Self.event(id, .added(TransferTableTests.snapshot(id))))
                        display.receive(Self.event(id, .status(.running)))
                        display.receive(
                            Self.event(id, .status(.completed(file: directory.file("\(id).bin")))))
                    }
                }
            }
        }
        let entries = display.entries
        #expect(entries.count == 1600)
        #expect(entries.allSatisfy { $0.state == .completed })
        await manager.shutdown()
    }

    @Test("a download already running when followed is announced as started once, its start event or not")
    func followsRunningDownload() async throws {
        for followsNewDownloads in [false, true] {
            let directory = TemporaryDirectory()
            let (display, output, manager) = try await Self.recordingDisplay(
                in: directory, followsNewDownloads: followsNewDownloads)
            // haul run: the manager started it before the display listened; haul get: the event was held.
            if !followsNewDownloads { display.receive(Self.event(1, .status(.running))) }
            display.follow([TransferTableTests.snapshot(1, state: .running)])
            display.goLive()
            display.receive(Self.event(1, .status(.completed(file: directory.file("1.bin")))))
            let kinds = output.changes.map(\.kind).filter { $0 != "added" }
            #expect(kinds == ["running", "completed"], "follows new downloads: \(followsNewDownloads)")
            #expect(display.entries.first?.seconds != nil, "its time is measured, so is its average speed")
            await manager.shutdown()
        }
    }
}
