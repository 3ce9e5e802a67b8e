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
        let manager = try await DownloadManager(
            configuration: .init(
                downloadDirectory: directory.url, databaseURL: directory.file("state/haul.sqlite")))
        return (
            SessionDisplay(mode: .plain(quiet: true), manager: manager, followsNewDownloads: followsNewDownloads),
            manager
        )
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
}
