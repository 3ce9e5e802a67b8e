import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// A manager on a fresh directory and database, with an origin, tuned for fast tests.
struct Harness {
    let directory: TemporaryDirectory
    let origin: TestOrigin
    let manager: DownloadManager
    /// The in-memory store the manager records in; nil when it records in the SQLite database in ``directory``.
    var memory: InMemoryDownloadStore?

    /// `inMemory`: the manager records in a fresh ``InMemoryDownloadStore`` instead of a SQLite database (for tests
    /// of the manager, not of durability); ``reopen(_:)`` then opens the next manager on the same records.
    static func make(
        origin: TestOrigin? = nil, directory: TemporaryDirectory = TemporaryDirectory(), inMemory: Bool = false,
        _ configure: (inout DownloadManager.Configuration) -> Void = { _ in }
    ) async throws -> Harness {
        try await make(
            origin: origin, directory: directory, memory: inMemory ? InMemoryDownloadStore() : nil, configure)
    }

    private static func make(
        origin: TestOrigin?, directory: TemporaryDirectory, memory: InMemoryDownloadStore?,
        _ configure: (inout DownloadManager.Configuration) -> Void
    ) async throws -> Harness {
        let origin = try await Self.origin(origin)
        var configuration = Harness.configuration(directory)
        configure(&configuration)
        let manager =
            if let memory {
                try await DownloadManager(configuration: configuration, store: memory)
            } else {
                try await DownloadManager(configuration: configuration)
            }
        return Harness(directory: directory, origin: origin, manager: manager, memory: memory)
    }

    private static func origin(_ given: TestOrigin?) async throws -> TestOrigin {
        if let given { return given }
        return try await TestOrigin.start()
    }

    static func configuration(_ directory: TemporaryDirectory) -> DownloadManager.Configuration {
        var configuration = DownloadManager.Configuration(
            downloadDirectory: directory.url, databaseURL: directory.file("state/haul.sqlite"))
        configuration.retry.initialDelay = .milliseconds(10)
        configuration.retry.maxDelay = .milliseconds(50)
        // Generous: the whole suite runs in parallel on a small, shared machine.
        configuration.connectTimeout = .seconds(10)
        configuration.stallTimeout = .seconds(15)
        configuration.progressInterval = .milliseconds(50)
        return configuration
    }

    /// A harness with `stallTimeout` whose origin serves `/stall.bin` (600,000 bytes) and stalls its first response
    /// for 30 s after 250,000 bytes; returns the file's URL beside it.
    static func stallingOnce(stallTimeout: Duration) async throws -> (harness: Harness, url: URL) {
        let harness = try await make { $0.stallTimeout = stallTimeout }
        let url = harness.origin.serve("/stall.bin", size: 600_000)
        harness.origin.setFaults {
            $0.stallAfter = 250_000
            $0.stallTimes = 1
            $0.stallDuration = .seconds(30)
        }
        return (harness, url)
    }

    /// A second manager on the same directory and database (as after a restart); with an in-memory store, on
    /// another handle of its records (as another process on the same database file).
    func reopen(_ configure: (inout DownloadManager.Configuration) -> Void = { _ in }) async throws -> Harness {
        try await Harness.make(
            origin: origin, directory: directory, memory: memory.map(InMemoryDownloadStore.init(sharingRecordsOf:)),
            configure)
    }

    func shutdown() async {
        await manager.shutdown()
        await origin.stop()
    }

    /// Waits until the download reports at least `bytes` received.
    func waitForProgress(_ id: DownloadID, atLeast bytes: Int64, timeout: Duration = .seconds(20)) async throws {
        let start = ContinuousClock.now
        while (await manager.snapshot(id)?.receivedBytes ?? 0) < bytes {
            if start.duration(to: .now) > timeout { throw HarnessTimeout(what: "progress to \(bytes)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until the download is in `state`.
    func waitForState(_ id: DownloadID, _ state: DownloadState, timeout: Duration = .seconds(20)) async throws {
        let start = ContinuousClock.now
        while await manager.snapshot(id)?.state != state {
            if start.duration(to: .now) > timeout { throw HarnessTimeout(what: "state \(state)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

struct HarnessTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Checks that the file at `url` is exactly `size` bytes of test content `version`.
func expectContent(
    _ url: URL, size: Int, version: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let data = FileManager.default.contents(atPath: url.path) else {
        Issue.record("no file at \(url.path)", sourceLocation: sourceLocation)
        return
    }
    let mismatch = TestContent.firstMismatch([UInt8](data), size: size, version: version)
    #expect(
        mismatch == nil, "first wrong byte at \(mismatch ?? -1) of \(url.lastPathComponent)",
        sourceLocation: sourceLocation)
}
