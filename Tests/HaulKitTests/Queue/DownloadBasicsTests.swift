import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

@Suite("Downloading a file")
struct DownloadBasicsTests {
    @Test("streams the whole file to its destination, byte for byte")
    func downloadsFile() async throws {
        let harness = try await Harness.make(inMemory: true)
        let size = 3 * 1024 * 1024 + 17
        let url = harness.origin.serve("/files/data.bin", size: size)

        let id = try await harness.manager.add(url)
        let file = try await harness.manager.wait(for: id)

        #expect(file.lastPathComponent == "data.bin")
        expectContent(file, size: size)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".part"))
        let snapshot = try #require(await harness.manager.snapshot(id))
        #expect(snapshot.state == .completed)
        #expect(snapshot.totalBytes == Int64(size))
        #expect(snapshot.fraction == 1)
        let requests = harness.origin.requests(to: "/files/data.bin")
        #expect(requests.count == 1)
        #expect(requests.first?.range == "bytes=0-")
        #expect(requests.first?.header("Accept-Encoding") == "identity")
        #expect(requests.first?.ifRange == nil)
        await harness.shutdown()
    }

    @Test(
        "the manager's view of a completed download is what its finishing group committed (nothing written again)",
        arguments: [4096, 300 * 1024])
    func completedRecordMatchesStore(size: Int) async throws {
        let harness = try await Harness.make(inMemory: true)
        let url = harness.origin.serve("/files/small.bin", size: size)
        let id = try await harness.manager.add(url)
        _ = try await harness.manager.wait(for: id)

        let held = try #require(await harness.manager.records[id])
        let stored = try #require(try await harness.manager.store.fetch(id))
        // What the finishing group committed, not the record from before it (stored dates keep milliseconds).
        #expect(held.transfer == stored.transfer)
        #expect(held.state == stored.state && held.destinationPath == stored.destinationPath)
        for (kept, written) in [
            (held.updatedAt, stored.updatedAt),
            (held.completedAt ?? .distantPast, stored.completedAt ?? .distantFuture),
        ] {
            #expect(abs(kept.timeIntervalSince(written)) < 0.001)
        }
        // A part file is synced, then recorded finalizing; a small body held in memory is recorded before its part
        // file is written, so none of its bytes is claimed synced.
        let heldInMemory = size <= 256 * 1024
        #expect(stored.transfer.durableBytes == (heldInMemory ? 0 : Int64(size)))
        #expect(stored.transfer.finalizing == !heldInMemory)
        await harness.shutdown()
    }

    @Test("reports added, queued, running, progress and completed events in order")
    func reportsEvents() async throws {
        let harness = try await Harness.make(inMemory: true)
        let size = 2 * 1024 * 1024
        let url = harness.origin.serve("/e.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 }
        let events = await harness.manager.events()
        let id = try await harness.manager.add(url)
        var kinds: [String] = []
        var lastProgress: DownloadProgress?
        for await event in events where event.id == id {
            switch event.change {
            case .added: kinds.append("added")
            case .status(.queued): kinds.append("queued")
            case .status(.running): kinds.append("running")
            case .status(.completed(let file)):
                kinds.append("completed")
                expectContent(file, size: size)
            case .progress(let progress):
                if kinds.last != "progress" { kinds.append("progress") }
                if let lastProgress { #expect(progress.receivedBytes >= lastProgress.receivedBytes) }
                lastProgress = progress
                #expect(progress.expectedBytes == Int64(size))
            default: break
            }
            if kinds.last == "completed" { break }
        }
        #expect(kinds == ["added", "queued", "running", "progress", "completed"])
        await harness.shutdown()
    }

    @Test("an added event's snapshot has the URL the manager answers with later: absolute, without credentials")
    func addedSnapshotURL() async throws {
        let harness = try await Harness.make(inMemory: true)
        let plain = harness.origin.serve("/plain.bin", size: 1000)
        let relative = try #require(URL(string: "relative.bin?x=1", relativeTo: plain))
        var components = try #require(URLComponents(url: plain, resolvingAgainstBaseURL: false))
        components.user = "ann"
        components.password = "secret"
        let withCredentials = try #require(components.url)
        let added = Mutex<[DownloadID: URL]>([:])
        let observation = await harness.manager.observeEvents { event in
            if case .added(let snapshot) = event.change { added.withLock { $0[event.id] = snapshot.url } }
        }
        let ids = try await harness.manager.add(
            contentsOf: [plain, relative, withCredentials].map { ($0, nil, DownloadOptions()) }, paused: true)
        observation.cancel()
        let seen = added.withLock { $0 }
        for id in ids {
            let later = try #require(await harness.manager.snapshot(id)).url
            #expect(seen[id] == later, "\(id)")
            #expect(seen[id]?.baseURL == nil, "\(id)")
        }
        #expect(seen[ids[1]]?.absoluteString == relative.absoluteString)
        #expect(seen[ids[2]]?.user == nil)
        await harness.shutdown()
    }

    @Test("an event handler sees every download's events as a stream does, and none once cancelled")
    func observesEvents() async throws {
        let harness = try await Harness.make(inMemory: true)
        let urls = (0..<6).map { harness.origin.serve("/o\($0).bin", size: 20_000 + $0) }
        let seen = Mutex<[DownloadID: [String]]>([:])
        let observation = await harness.manager.observeEvents { event in
            let kind: String
            switch event.change {
            case .added: kind = "added"
            case .status(.queued): kind = "queued"
            case .status(.running): kind = "running"
            case .status(.completed): kind = "completed"
            case .progress: kind = "progress"
            case .verified: kind = "verified"
            default: kind = "other"
            }
            seen.withLock { seen in
                // Progress repeats; one is enough to compare.
                if kind != "progress" || seen[event.id]?.last != "progress" { seen[event.id, default: []].append(kind) }
            }
        }
        let ids = try await harness.manager.add(contentsOf: urls.map { ($0, nil, DownloadOptions()) })
        for id in ids { _ = try await harness.manager.wait(for: id) }
        let kinds = seen.withLock { $0 }
        for id in ids {
            #expect(kinds[id] == ["added", "queued", "running", "progress", "verified", "completed"], "\(id)")
        }

        observation.cancel()
        observation.cancel()
        let later = try await harness.manager.add(harness.origin.serve("/later.bin", size: 1000))
        _ = try await harness.manager.wait(for: later)
        #expect(seen.withLock { $0[later] } == nil)
        await harness.shutdown()
    }

    @Test("sends at most ~10 progress events a second per download")
    func throttlesProgressEvents() async throws {
        let harness = try await Harness.make(inMemory: true) { $0.progressInterval = .milliseconds(250) }
        let url = harness.origin.serve("/slow.bin", size: 1024 * 1024)
        harness.origin.setFaults { $0.bytesPerSecond = 512 * 1024 }
        let events = await harness.manager.events()
        let started = ContinuousClock.now
        let id = try await harness.manager.add(url)
        var progressEvents = 0
        for await event in events where event.id == id {
            if case .progress = event.change { progressEvents += 1 }
            if case .status(.completed) = event.change { break }
        }
        let seconds = Double(started.duration(to: .now).components.seconds) + 1
        #expect(progressEvents > 2)
        #expect(Double(progressEvents) <= seconds * 10)
        await harness.shutdown()
    }

    @Test("creates missing parent directories for an explicit destination")
    func createsParents() async throws {
        let harness = try await Harness.make(inMemory: true)
        let url = harness.origin.serve("/p.bin", size: 1000)
        let target = harness.directory.file("a/b/c/out.bin")
        let id = try await harness.manager.add(url, to: .file(target))
        let file = try await harness.manager.wait(for: id)
        #expect(file.path == target.path)
        expectContent(file, size: 1000)
        await harness.shutdown()
    }

    @Test("keeps the application's metadata and reports it back, also after a restart")
    func keepsMetadata() async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/m.bin", size: 10)
        let metadata = ["title": "Episode 1", "image": "https://example.com/1.png", "price": "0.99"]
        let id = try await harness.manager.add(url, options: .init(priority: 3, metadata: metadata))
        _ = try await harness.manager.wait(for: id)
        await harness.manager.shutdown()
        let reopened = try await harness.reopen()
        let snapshot = try #require(await reopened.manager.snapshot(id))
        #expect(snapshot.metadata == metadata)
        #expect(snapshot.options.priority == 3)
        #expect(snapshot.state == .completed)
        #expect(snapshot.isCompleted)
        await reopened.shutdown()
    }

    @Test("calls back with progress and the result, like the classic API")
    func callbackAPI() async throws {
        let harness = try await Harness.make(inMemory: true)
        let size = 1024 * 1024
        let url = harness.origin.serve("/cb.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 }
        let result: Result<URL, DownloadError> = await withCheckedContinuation { continuation in
            Task {
                try await harness.manager.download(
                    url,
                    progress: { received, expected, fraction in
                        #expect(expected == nil || expected == Int64(size))
                        #expect(received <= Int64(size))
                        #expect(fraction == nil || (0...1).contains(fraction!))
                    },
                    completion: { continuation.resume(returning: $0) })
            }
        }
        expectContent(try result.get(), size: size)
        await harness.shutdown()
    }

    @Test("adding the same URL and destination again continues the existing download")
    func addingTwiceContinues() async throws {
        let harness = try await Harness.make(inMemory: true)
        let url = harness.origin.serve("/twice.bin", size: 4 * 1024 * 1024)
        harness.origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
        let first = try await harness.manager.add(url)
        try await harness.waitForProgress(first, atLeast: 256 * 1024)
        try await harness.manager.pause(first)
        let second = try await harness.manager.add(url)
        #expect(first == second)
        let file = try await harness.manager.wait(for: second)
        expectContent(file, size: 4 * 1024 * 1024)
        #expect(await harness.manager.snapshots().count == 1)
        await harness.shutdown()
    }

    @Test("the same URL twice in one batch is one download: once fetched, no second copy, the later options taken")
    func sameURLTwiceInOneBatch() async throws {
        let harness = try await Harness.make(inMemory: true)
        let url = harness.origin.serve("/doubled.bin", size: 5000)
        let other = harness.origin.serve("/other.bin", size: 3000)
        let file = harness.directory.file("named.bin")
        let ids = try await harness.manager.add(
            contentsOf: [
                (url, nil, .init()), (other, nil, .init()), (url, nil, .init(priority: 7)),
                (url, .file(file), .init()), (url, .file(file), .init()),
            ])
        #expect(ids[0] == ids[2])
        #expect(ids[3] == ids[4])
        #expect(Set(ids).count == 3)
        #expect(await harness.manager.snapshot(ids[0])?.options.priority == 7)
        for id in Set(ids) { _ = try await harness.manager.wait(for: id) }
        let names = try FileManager.default.contentsOfDirectory(atPath: harness.directory.path)
        #expect(!names.contains { $0.hasPrefix("doubled (") })
        expectContent(harness.directory.file("doubled.bin"), size: 5000)
        expectContent(file, size: 5000)
        // doubled.bin once into the directory, once as named.bin (another destination: another download).
        #expect(harness.origin.requests(to: "/doubled.bin").count == 2)
        #expect(await harness.manager.snapshots().count == 3)
        await harness.shutdown()
    }

    /// A mirror list or a dashboard's queue: one URL saved under many names. Each addition once compared every
    /// earlier destination of its URL (10,000 took over five minutes), and, given 10,000 more names, read every
    /// record of the URL (over four minutes). The hang guard's limit is far above a linear batch's time.
    @Test(
        "one URL to 10,000 files in one batch: a repeat in the batch found, the list again finds each, new names are new",
        .timeLimit(.minutes(2)))
    func oneURLToManyFiles() async throws {
        let harness = try await Harness.make(inMemory: true)
        let url = harness.origin.serve("/one.bin", size: 100)
        let files = (1...10_000).map { harness.directory.file("f\($0).bin") }
        var batch = files.map { (url, Optional(DownloadDestination.file($0)), DownloadOptions()) }
        // f7.bin again, spelled another way: the same download.
        let respelled = harness.directory.file("sub/../f7.bin")
        batch.append((url, .file(respelled), .init(priority: 3)))
        let ids = try await harness.manager.add(contentsOf: batch, paused: true)
        #expect(Set(ids).count == 10_000)
        #expect(ids[10_000] == ids[6])
        #expect(await harness.manager.snapshot(ids[6])?.options.priority == 3)
        let again = try await harness.manager.add(
            contentsOf: files.reversed().map { (url, .file($0), .init()) }, paused: true)
        #expect(again == ids[..<10_000].reversed())
        // 10,000 more names: each a new download, found by no earlier one.
        let more = try await harness.manager.add(
            contentsOf: (1...10_000).map { (url, .file(harness.directory.file("g\($0).bin")), .init()) }, paused: true)
        #expect(Set(more).count == 10_000 && Set(more).isDisjoint(with: ids))
        #expect(await harness.manager.snapshots().count == 20_000)
        #expect(harness.origin.requests(to: "/one.bin").isEmpty)
        await harness.shutdown()
    }

    @Test("asked for again by where it writes: the file it was named, or the directory of the file given, is it")
    func askedForAgainByWhereItWrites() async throws {
        let harness = try await Harness.make(inMemory: true)
        let url = harness.origin.serve("/named.bin", size: 1500)
        let named = try await harness.manager.add(url)
        let file = try await harness.manager.wait(for: named)
        #expect(try await harness.manager.add(url, to: .file(file)) == named)
        let sub = harness.directory.file("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
        let given = try await harness.manager.add(url, to: .file(sub.appendingPathComponent("given.bin")), paused: true)
        #expect(given != named)
        #expect(try await harness.manager.add(url, to: .directory(sub), paused: true) == given)
        // Another name in that directory, or another URL to the named file: not these.
        let other = try await harness.manager.add(url, to: .file(sub.appendingPathComponent("other.bin")), paused: true)
        #expect(other != given && other != named)
        let elsewhere = harness.origin.serve("/elsewhere.bin", size: 10)
        let third = try await harness.manager.add(elsewhere, to: .file(file), paused: true)
        #expect(third != named)
        #expect(harness.origin.requests(to: "/named.bin").count == 1)
        await harness.shutdown()
    }

    @Test("adding again to a directory that did not exist the first time finds the same download")
    func addingToNewDirectoryAgain() async throws {
        let harness = try await Harness.make(inMemory: true)
        let url = harness.origin.serve("/later.bin", size: 1000)
        let path = harness.directory.file("not-yet").path
        // `URL(fileURLWithPath:)` ends a directory's URL in `/` only once the directory is there.
        let first = try await harness.manager.add(url, to: .directory(URL(fileURLWithPath: path)), paused: true)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let second = try await harness.manager.add(url, to: .directory(URL(fileURLWithPath: path)))
        #expect(first == second)
        expectContent(try await harness.manager.wait(for: second), size: 1000)
        #expect(await harness.manager.snapshots().count == 1)
        await harness.shutdown()
    }

    @Test("downloads into several directories, one after another and in turn, each land in their own")
    func severalDirectories() async throws {
        let harness = try await Harness.make(inMemory: true)
        let directories = ["a", "b", "c"].map { harness.directory.file($0) }
        var expected: [DownloadID: (directory: URL, size: Int)] = [:]
        // a, a, b, a, c, c, b: the same directory again, another, and back.
        for (number, index) in [0, 0, 1, 0, 2, 2, 1].enumerated() {
            let url = harness.origin.serve("/d\(number)/same.bin", size: 2000 + number)
            let id = try await harness.manager.add(url, to: .directory(directories[index]))
            expected[id] = (directories[index], 2000 + number)
        }
        await harness.manager.waitUntilEnded(Array(expected.keys))
        for (id, (directory, size)) in expected {
            let file = try #require(await harness.manager.snapshot(id)?.file)
            #expect(file.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path)
            #expect(file.lastPathComponent.hasPrefix("same"))
            expectContent(file, size: size)
        }
        await harness.shutdown()
    }
}
