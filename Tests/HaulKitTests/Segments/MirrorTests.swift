import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// One file from several URLs: segments spread over mirrors, a failing or different mirror dropped, never spliced.
@Suite("Mirrors")
struct MirrorTests {
    static let size = 6 * 1024 * 1024 + 321

    /// Starts a download of `/file.bin` from `harness.origin` with `mirrors`, collecting the mirrors it dropped.
    static func download(
        _ harness: Harness, mirrors: [URL], connections: Int = 4, checksum: Checksum? = nil
    ) async throws -> (file: URL, dropped: [(URL, String)]) {
        let events = await harness.manager.events()
        let dropped = Mutex<[(URL, String)]>([])
        let collector = Task {
            for await event in events {
                if case .mirrorDropped(let url, let reason) = event.change {
                    dropped.withLock { $0.append((url, reason)) }
                }
            }
        }
        let id = try await harness.manager.add(
            harness.origin.url("/file.bin"),
            options: .init(checksum: checksum, connections: connections, mirrors: mirrors))
        let file = try await harness.manager.wait(for: id)
        try await Task.sleep(for: .milliseconds(50))
        collector.cancel()
        return (file, dropped.withLock { $0 })
    }

    static func harness() async throws -> Harness {
        try await Harness.make { $0.minimumSegmentSize = 256 * 1024 }
    }

    @Test("segments are spread over the mirrors that serve the same file; each was checked before it wrote")
    func spreadsOverMirrors() async throws {
        let harness = try await Self.harness()
        let first = try await TestOrigin.start()
        let second = try await TestOrigin.start()
        for origin in [harness.origin, first, second] {
            var resource = TestOrigin.Resource(size: Self.size)
            resource.fixedValidators = origin !== harness.origin  // other servers, other validators
            origin.serve("/file.bin", resource)
            origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 }
        }
        let (file, dropped) = try await Self.download(
            harness, mirrors: [first.url("/file.bin"), second.url("/file.bin")])
        expectContent(file, size: Self.size)
        #expect(dropped.isEmpty, "\(dropped)")
        for mirror in [first, second] {
            let requests = mirror.requests(to: "/file.bin")
            #expect(mirror.bodyBytesSent(to: "/file.bin") > 64 * 1024, "a mirror served only its check")
            // A mirror is asked for ranges without If-Range (its validators are its own).
            #expect(requests.allSatisfy { $0.range != nil && $0.ifRange == nil })
        }
        let total = [harness.origin, first, second].reduce(0) { $0 + $1.bodyBytesSent(to: "/file.bin") }
        // Each range a mirror served (every request but its check) is confirmed by the primary's bytes for both
        // of its ends: at most 2 × 64 KiB each.
        let served = [first, second].reduce(0) { $0 + $1.requests(to: "/file.bin").count - 1 }
        let confirmations = served * 2 * 64 * 1024
        #expect(total < Self.size + 2 * 64 * 1024 + 512 * 1024 + confirmations)  // checks, a little overlap
        await harness.shutdown()
        await first.stop()
        await second.stop()
    }

    @Test("a mirror with another version, one of another length and one that is missing are dropped, with reasons")
    func dropsMirrorsThatDiffer() async throws {
        let harness = try await Self.harness()
        let otherVersion = try await TestOrigin.start()
        let otherLength = try await TestOrigin.start()
        let missing = try await TestOrigin.start()
        harness.origin.serve("/file.bin", size: Self.size)
        harness.origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 }
        var changed = TestOrigin.Resource(size: Self.size)
        changed.version = 7
        otherVersion.serve("/file.bin", changed)
        otherLength.serve("/file.bin", size: Self.size + 1)
        let (file, dropped) = try await Self.download(
            harness,
            mirrors: [otherVersion.url("/file.bin"), otherLength.url("/file.bin"), missing.url("/file.bin")],
            connections: 4)
        expectContent(file, size: Self.size)
        let reasons = Dictionary(dropped.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(reasons[otherVersion.url("/file.bin")]?.contains("differ") == true, "\(reasons)")
        #expect(reasons[otherLength.url("/file.bin")]?.contains("bytes long") == true, "\(reasons)")
        #expect(reasons[missing.url("/file.bin")]?.contains("404") == true, "\(reasons)")
        // Each was asked once (its check) and never again.
        for mirror in [otherVersion, otherLength, missing] { #expect(mirror.requests(to: "/file.bin").count == 1) }
        await harness.shutdown()
        for mirror in [otherVersion, otherLength, missing] { await mirror.stop() }
    }

    @Test("a mirror whose bytes differ beyond the first 64 KiB is caught by the primary's bytes and never spliced in")
    func mirrorDifferingLater() async throws {
        let harness = try await Self.harness()
        let mirror = try await TestOrigin.start()
        harness.origin.serve("/file.bin", size: Self.size)
        // The second half is wrong: the mirror passes its check (the first bytes the primary wrote), then serves the
        // second connection's segment.
        var bad = TestOrigin.Resource(size: Self.size)
        bad.corrupted = (Self.size / 2 - 4096)..<Self.size
        mirror.serve("/file.bin", bad)
        for origin in [harness.origin, mirror] { origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 } }
        let (file, dropped) = try await Self.download(harness, mirrors: [mirror.url("/file.bin")], connections: 2)
        expectContent(file, size: Self.size)
        #expect(dropped.count == 1, "\(dropped)")
        #expect(dropped.first?.1.contains("differ from the primary's") == true, "\(dropped)")
        #expect(mirror.bodyBytesSent(to: "/file.bin") > 64 * 1024, "the mirror served a segment")
        await harness.shutdown()
        await mirror.stop()
    }

    @Test("bytes changed inside a mirror's range fail the checksum: the file is fetched again from the primary")
    func mirrorCaughtByChecksum() async throws {
        let harness = try await Self.harness()
        let mirror = try await TestOrigin.start()
        harness.origin.serve("/file.bin", size: Self.size)
        // A few bytes wrong well inside the mirror's segment: both of its ends agree with the primary.
        var bad = TestOrigin.Resource(size: Self.size)
        bad.corrupted = (Self.size * 5 / 8)..<(Self.size * 5 / 8 + 100)
        mirror.serve("/file.bin", bad)
        // The primary slower than the mirror: on a loaded machine the mirror still serves its segment (the corrupt
        // bytes) before the primary could take it over.
        harness.origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
        mirror.setFaults { $0.bytesPerSecond = 6 * 1024 * 1024 }
        let checksum = try Checksum(.sha256, hex: TestContent.sha256(size: Self.size))
        let restarts = Mutex<[RestartReason]>([])
        let events = await harness.manager.events()
        let collector = Task {
            for await event in events {
                if case .restarted(let reason) = event.change { restarts.withLock { $0.append(reason) } }
            }
        }
        let (file, dropped) = try await Self.download(
            harness, mirrors: [mirror.url("/file.bin")], connections: 2, checksum: checksum)
        collector.cancel()
        expectContent(file, size: Self.size)
        #expect(mirror.bodyBytesSent(to: "/file.bin") > Self.size / 8, "the mirror served its segment")
        #expect(dropped.count == 1 && dropped.first?.1.contains("checksum") == true, "\(dropped)")
        #expect(restarts.withLock { $0 } == [.checksumMismatch])
        await harness.shutdown()
        await mirror.stop()
    }

    @Test("a mirror that fails mid-way is dropped and its segment goes elsewhere")
    func dropsFailingMirror() async throws {
        let harness = try await Self.harness()
        let flaky = try await TestOrigin.start()
        harness.origin.serve("/file.bin", size: Self.size)
        flaky.serve("/file.bin", size: Self.size)
        for origin in [harness.origin, flaky] { origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 } }
        flaky.setFaults { $0.cutAtByte = Self.size / 2 }
        // Two connections: the second uses the mirror until it fails.
        let (file, dropped) = try await Self.download(harness, mirrors: [flaky.url("/file.bin")], connections: 2)
        expectContent(file, size: Self.size)
        #expect(dropped.count == 1, "\(dropped)")
        #expect(dropped.first?.0 == flaky.url("/file.bin"))
        await harness.shutdown()
        await flaky.stop()
    }

    @Test("mirrors are stored with the download and validated; replacing them applies to the next run")
    func storedAndEdited() async throws {
        let harness = try await Harness.make()
        let id = try await harness.manager.add(
            harness.origin.serve("/small.bin", size: 1000),
            options: .init(mirrors: [URL(string: "https://mirror.example/small.bin")!]))
        _ = try await harness.manager.wait(for: id)
        #expect(
            await harness.manager.snapshot(id)?.options.mirrors == [URL(string: "https://mirror.example/small.bin")!])
        try await harness.manager.setMirrors([URL(string: "http://other.example/s.bin")!], for: id)
        let reopened = try await harness.reopen()
        await harness.manager.shutdown()
        #expect(await reopened.manager.snapshot(id)?.options.mirrors == [URL(string: "http://other.example/s.bin")!])
        await #expect(throws: DownloadError.self) {
            try await reopened.manager.setMirrors([URL(string: "ftp://x/y")!], for: id)
        }
        await #expect(throws: DownloadError.self) {
            try await reopened.manager.add(
                reopened.origin.url("/x"), options: .init(mirrors: [URL(string: "file:///etc/passwd")!]))
        }
        await reopened.shutdown()
    }
}
