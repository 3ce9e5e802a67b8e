import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// Managers whose downloads are recorded in memory: the public ``DownloadStoreFactory/inMemory`` and the package
/// initializer that takes a store.
@Suite("Managers on the in-memory store")
struct InMemoryManagerTests {
    @Test("DownloadStoreFactory.inMemory: downloads complete with no state file written, each manager its own records")
    func factory() async throws {
        let directory = TemporaryDirectory()
        let origin = try await TestOrigin.start()
        var configuration = Harness.configuration(directory)
        configuration.store = .inMemory
        let manager = try await DownloadManager(configuration: configuration)
        let id = try await manager.add(origin.serve("/m.bin", size: 300_000))
        let file = try await manager.wait(for: id)
        expectContent(file, size: 300_000)
        #expect(await manager.state(of: id) == .completed)
        let state = configuration.databaseURL.deletingLastPathComponent().path
        #expect(!FileManager.default.fileExists(atPath: state), "no state directory, no database")
        let other = try await DownloadManager(configuration: configuration)
        #expect(await other.count(in: Set(DownloadState.allCases)) == 0, "a store of its own")
        await other.shutdown()
        await manager.shutdown()
        await origin.stop()
    }

    @Test("two managers on one in-memory database: an editor's add is picked up and finished by the runner")
    func sharedRecords() async throws {
        let runner = try await Harness.make(inMemory: true) { $0.externalChangeInterval = .milliseconds(50) }
        let memory = try #require(runner.memory)
        var configuration = Harness.configuration(runner.directory)
        configuration.runsDownloads = false
        let editor = try await DownloadManager(
            configuration: configuration, store: InMemoryDownloadStore(sharingRecordsOf: memory))
        #expect(editor.configuration.store.isShared == false)
        let id = try await editor.add(runner.origin.serve("/added.bin", size: 200_000))
        #expect(runner.origin.requests(to: "/added.bin").isEmpty, "an editor never downloads")
        let file = try await runner.manager.wait(for: id)
        expectContent(file, size: 200_000)
        #expect(try memory.fetch(id)?.state == .completed)
        await editor.shutdown()
        await runner.shutdown()
    }
}
