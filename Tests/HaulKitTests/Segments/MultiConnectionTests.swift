import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Multi-connection downloads")
struct MultiConnectionTests {
    static func harness(_ configure: (inout DownloadManager.Configuration) -> Void = { _ in }) async throws -> Harness {
        try await Harness.make {
            $0.minimumSegmentSize = 256 * 1024
            configure(&$0)
        }
    }

    @Test("N connections are really used, every segment request is validated, and the file is byte-exact")
    func usesConnections() async throws {
        let harness = try await Self.harness()
        let size = 6 * 1024 * 1024 + 7
        let url = harness.origin.serve("/multi.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let events = await harness.manager.events()
        let id = try await harness.manager.add(url, options: .init(connections: 4))
        var mostConnections = 0
        for await event in events where event.id == id {
            if case .progress(let progress) = event.change {
                mostConnections = max(mostConnections, progress.activeConnections)
            }
            if case .status(.completed(let file)) = event.change {
                expectContent(file, size: size)
                break
            }
            if case .status(.failed(let error)) = event.change {
                Issue.record("failed: \(error)")
                break
            }
        }
        #expect(harness.origin.peakResponses == 4)
        #expect(mostConnections >= 3)
        let requests = harness.origin.requests(to: "/multi.bin")
        // The first request is bounded, so splitting the file never cuts it short.
        #expect(requests.first?.range == "bytes=0-524287")
        #expect(requests.first?.bodyBytesSent == 524_288)
        #expect(requests.count >= 4)
        let sent = requests.reduce(0) { $0 + $1.bodyBytesSent }
        #expect(sent - size < size / 20, "sent \(sent) bytes for a file of \(size)")
        for request in requests.dropFirst() {
            #expect(request.ifRange == TestOrigin.Resource(size: size).etag)
            #expect(request.range?.hasPrefix("bytes=") == true)
        }
        #expect(!FileManager.default.fileExists(atPath: harness.directory.file("multi.bin.part.segments").path))
        await harness.shutdown()
    }

    @Test("without range support it falls back to one connection, without an error")
    func fallsBack() async throws {
        let harness = try await Self.harness()
        let size = 3 * 1024 * 1024
        let url = harness.origin.serve("/plain.bin", size: size)
        harness.origin.setFaults { $0.ignoresRange = true }
        let id = try await harness.manager.add(url, options: .init(connections: 8))
        expectContent(try await harness.manager.wait(for: id), size: size)
        #expect(harness.origin.requests(to: "/plain.bin").count == 1)
        await harness.shutdown()
    }

    @Test("a server that refuses extra connections gets fewer, and the download completes")
    func backsOff() async throws {
        let harness = try await Self.harness()
        let size = 4 * 1024 * 1024
        let url = harness.origin.serve("/picky.bin", size: size)
        harness.origin.setFaults {
            $0.bytesPerSecond = 2 * 1024 * 1024
            $0.refuseAbove = 2
        }
        let id = try await harness.manager.add(url, options: .init(connections: 6))
        expectContent(try await harness.manager.wait(for: id), size: size)
        #expect(harness.origin.peakResponses <= 2)
        #expect(harness.origin.requests(to: "/picky.bin").contains { $0.status == 503 })
        await harness.shutdown()
    }

    @Test("a file that changed while paused is downloaded again entirely as the new version")
    func changedWhilePaused() async throws {
        let harness = try await Self.harness()
        let size = 4 * 1024 * 1024
        let url = harness.origin.serve("/moving.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 512 * 1024 }
        let events = await harness.manager.events()
        let id = try await harness.manager.add(url, options: .init(connections: 4))
        try await harness.waitForProgress(id, atLeast: 512 * 1024)
        try await harness.manager.pause(id)
        harness.origin.updateResource("/moving.bin") { $0.version = 3 }
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        try await harness.manager.resume(id)
        expectContent(try await harness.manager.wait(for: id), size: size, version: 3)
        #expect(await restartReasons(events, id).first == .resourceChanged)
        await harness.shutdown()
    }

    @Test("a restarted manager continues every segment where it was, re-checking each one's tail")
    func resumesSegments() async throws {
        let harness = try await Self.harness()
        let size = 4 * 1024 * 1024
        let url = harness.origin.serve("/resume-multi.bin", size: size)
        harness.origin.setFaults { $0.bytesPerSecond = 512 * 1024 }
        let id = try await harness.manager.add(url, options: .init(connections: 4))
        try await harness.waitForProgress(id, atLeast: 1024 * 1024)
        await harness.manager.shutdown()
        let before = harness.origin.requests(to: "/resume-multi.bin").count
        let received = try #require(await harness.manager.snapshot(id)).receivedBytes
        #expect(received >= 1024 * 1024)

        harness.origin.setFaults { $0.bytesPerSecond = nil }
        let reopened = try await harness.reopen { $0.minimumSegmentSize = 256 * 1024 }
        expectContent(try await reopened.manager.wait(for: id), size: size)
        let resumed = harness.origin.requests(to: "/resume-multi.bin").dropFirst(before)
        #expect(!resumed.isEmpty)
        #expect(resumed.allSatisfy { $0.ifRange != nil && $0.range != nil })
        // Nothing already on disk is fetched again beyond the 64 KiB re-checks. Counted from the restart: what the
        // origin had pushed into socket buffers before the shutdown was never received (under load, megabytes).
        let resent = resumed.reduce(0) { $0 + $1.bodyBytesSent }
        #expect(resent <= size - Int(received) + 4 * 64 * 1024 + 128 * 1024, "received \(received) before")
        await reopened.shutdown()
    }

    @Test("connections outside 1…32 are refused")
    func validatesConnections() async throws {
        let harness = try await Self.harness()
        for bad in [0, 33] {
            await #expect(throws: DownloadError.self) {
                try await harness.manager.add(harness.origin.url("/x"), options: .init(connections: bad))
            }
        }
        await harness.shutdown()
    }
}
