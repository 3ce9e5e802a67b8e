import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Failures and retries")
struct FailureTests {
    /// Runs a download to its end and returns its error (nil when it completed).
    private func outcome(
        _ harness: Harness, _ url: URL, options: DownloadOptions = .init()
    ) async throws
        -> DownloadError?
    {
        let id = try await harness.manager.add(url, options: options)
        do {
            _ = try await harness.manager.wait(for: id)
            return nil
        } catch {
            #expect(await harness.manager.snapshot(id)?.state == .failed)
            #expect(await harness.manager.snapshot(id)?.lastError == error)
            return error
        }
    }

    @Test("404 fails at once with a clear, final error and leaves no file")
    func notFound() async throws {
        let harness = try await Harness.make()
        let error = try #require(try await outcome(harness, harness.origin.url("/missing.bin")))
        #expect(error.code == .httpClientError)
        #expect(error.httpStatus == 404)
        #expect(!error.isTransient)
        #expect(error.description.contains("404"))
        #expect(error.description.contains("check the URL"))
        #expect(harness.origin.requests(to: "/missing.bin").count == 1)
        #expect(harness.directory.entries() == ["state"])
        await harness.shutdown()
    }

    @Test("503 with Retry-After is honoured (an hour, on a mock clock), then the download completes")
    func honoursRetryAfter() async throws {
        let clock = MockClock()
        // A wait longer than the time allowed without progress gives up instead (RetryBudgetTests); allow two hours.
        let harness = try await Harness.make {
            $0.clock = clock
            $0.retry.maxTimeWithoutProgress = .seconds(7200)
        }
        let url = harness.origin.serve("/busy.bin", size: 1000)
        harness.origin.setFaults { $0.scripted = [(503, [("Retry-After", "3600")])] }
        let id = try await harness.manager.add(url)
        try await clock.waitForSleepers(1)
        #expect(clock.pendingDelays == [.seconds(3600)])
        #expect(await harness.manager.snapshot(id)?.state == .running)
        clock.advance(by: .seconds(3600))
        expectContent(try await harness.manager.wait(for: id), size: 1000)
        #expect(harness.origin.requests(to: "/busy.bin").map(\.status) == [503, 206])
        await harness.shutdown()
    }

    @Test("Retry-After as an HTTP date and 429 are honoured too")
    func retryAfterDate() async throws {
        let clock = MockClock()
        let harness = try await Harness.make { $0.clock = clock }
        let url = harness.origin.serve("/slowdown.bin", size: 1000)
        let date = HTTPDate.format(Date().addingTimeInterval(120))
        harness.origin.setFaults { $0.scripted = [(429, [("Retry-After", date)])] }
        let id = try await harness.manager.add(url)
        try await clock.waitForSleepers(1)
        let delay = try #require(clock.pendingDelays.first)
        #expect(delay > .seconds(100) && delay <= .seconds(121))
        clock.advance(by: .seconds(121))
        expectContent(try await harness.manager.wait(for: id), size: 1000)
        await harness.shutdown()
    }

    @Test("a server that keeps failing is given up after the configured attempts")
    func givesUpAfterAttempts() async throws {
        let harness = try await Harness.make { $0.retry.maxAttempts = 3 }
        harness.origin.respond("/broken", status: 500)
        let error = try #require(try await outcome(harness, harness.origin.url("/broken")))
        #expect(error.code == .serverError)
        #expect(error.summary.contains("gave up after 3 attempts"))
        #expect(harness.origin.requests(to: "/broken").count == 3)
        await harness.shutdown()
    }

    @Test("a stalled body is dropped after the stall timeout and resumed")
    func stallIsResumed() async throws {
        let (harness, url) = try await Harness.stallingOnce(stallTimeout: .seconds(2))
        let size = 600_000
        let id = try await harness.manager.add(url)
        expectContent(try await harness.manager.wait(for: id), size: size)
        let requests = harness.origin.requests(to: "/stall.bin")
        #expect(requests.count >= 2)
        #expect(requests.dropFirst().first?.range == "bytes=250000-")
        await harness.shutdown()
    }

    @Test("a body that is always cut short, from a server without ranges, never ends as completed")
    func neverFalseSuccessOnShortBody() async throws {
        let harness = try await Harness.make { $0.retry.maxAttempts = 3 }
        let url = harness.origin.serve("/short.bin", size: 100_000)
        harness.origin.setFaults {
            $0.ignoresRange = true
            $0.cutAfter = 40_000
        }
        let error = try #require(try await outcome(harness, url))
        #expect(error.isTransient)
        #expect(!FileManager.default.fileExists(atPath: harness.directory.file("short.bin").path))
        await harness.shutdown()
    }

    @Test("a chunked body without its last chunk never ends as completed")
    func chunkedCutShort() async throws {
        let harness = try await Harness.make { $0.retry.maxAttempts = 2 }
        var resource = TestOrigin.Resource(size: 100_000)
        resource.chunked = true
        let url = harness.origin.serve("/chunked-cut.bin", resource)
        harness.origin.setFaults {
            $0.ignoresRange = true
            $0.cutAfter = 60_000
        }
        let error = try #require(try await outcome(harness, url))
        #expect(error.isTransient)
        #expect(!FileManager.default.fileExists(atPath: harness.directory.file("chunked-cut.bin").path))
        await harness.shutdown()
    }

    @Test("a chunked body without a length downloads completely, and resumes after a cut")
    func chunkedBody() async throws {
        let harness = try await Harness.make()
        var resource = TestOrigin.Resource(size: 700_000)
        resource.chunked = true
        let url = harness.origin.serve("/chunked.bin", resource)
        harness.origin.setFaults {
            $0.cutAfter = 300_000
            $0.cutTimes = 1
        }
        let id = try await harness.manager.add(url)
        expectContent(try await harness.manager.wait(for: id), size: 700_000)
        #expect(harness.origin.requests(to: "/chunked.bin").last?.range == "bytes=300000-")
        await harness.shutdown()
    }

    @Test("a response that dies inside its headers never ends as completed")
    func diesInHeaders() async throws {
        let harness = try await Harness.make { $0.retry.maxAttempts = 2 }
        let url = harness.origin.serve("/headers.bin", size: 1000)
        harness.origin.setFaults { $0.dieInHeadersAfter = 30 }
        let error = try #require(try await outcome(harness, url))
        #expect(error.code == .networkFailure)
        await harness.shutdown()
    }

    @Test("malformed or conflicting Content-Length fails as a malformed response", arguments: ["abc", "1000, 2000"])
    func malformedContentLength(_ value: String) async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/badlength.bin", size: 1000)
        harness.origin.setFaults { $0.rawContentLength = value }
        let error = try #require(try await outcome(harness, url))
        #expect(error.code == .malformedResponse)
        #expect(!FileManager.default.fileExists(atPath: harness.directory.file("badlength.bin").path))
        await harness.shutdown()
    }

    @Test("redirects are followed and the final URL recorded")
    func followsRedirects() async throws {
        let harness = try await Harness.make()
        harness.origin.serve("/real/target.bin", size: 5000)
        harness.origin.redirect("/start", to: "/hop1")
        harness.origin.redirect("/hop1", to: "/hop2", status: 301)
        harness.origin.redirect("/hop2", to: "/real/target.bin", status: 307)
        let id = try await harness.manager.add(harness.origin.url("/start"))
        let file = try await harness.manager.wait(for: id)
        #expect(file.lastPathComponent == "target.bin")
        expectContent(file, size: 5000)
        #expect(await harness.manager.snapshot(id)?.finalURL == harness.origin.url("/real/target.bin"))
        await harness.shutdown()
    }

    @Test("a redirect loop fails with redirectLoop")
    func redirectLoop() async throws {
        let harness = try await Harness.make()
        harness.origin.redirect("/a", to: "/b")
        harness.origin.redirect("/b", to: "/a")
        let error = try #require(try await outcome(harness, harness.origin.url("/a")))
        #expect(error.code == .redirectLoop)
        await harness.shutdown()
    }

    @Test("more than 10 redirects fail with tooManyRedirects")
    func tooManyRedirects() async throws {
        let harness = try await Harness.make()
        for hop in 0..<11 { harness.origin.redirect("/r\(hop)", to: "/r\(hop + 1)") }
        harness.origin.serve("/r11", size: 10)
        let error = try #require(try await outcome(harness, harness.origin.url("/r0")))
        #expect(error.code == .tooManyRedirects)
        await harness.shutdown()
    }

    @Test("a refused connection is retried, then reported as a network failure")
    func connectionRefused() async throws {
        let harness = try await Harness.make { $0.retry.maxAttempts = 2 }
        let closed = try await TestOrigin.start()
        let url = closed.url("/gone.bin")
        await closed.stop()
        let error = try #require(try await outcome(harness, url))
        #expect(error.code == .networkFailure)
        #expect(error.isTransient)
        await harness.shutdown()
    }

    @Test("a matching checksum completes", arguments: Checksum.Algorithm.allCases)
    func checksumMatches(_ algorithm: Checksum.Algorithm) async throws {
        let harness = try await Harness.make()
        let size = 1_500_000
        let url = harness.origin.serve("/sum-\(algorithm).bin", size: size)
        let bytes = TestContent.bytes(0..<size)
        let digest = bytes.withUnsafeBytes {
            DigestHasher.hex(DigestHasher.digest(DigestAlgorithm(algorithm), of: $0))
        }
        let checksum = try Checksum(algorithm, hex: digest.uppercased())
        harness.origin.setFaults {
            $0.cutAfter = 700_000
            $0.cutTimes = 1
        }
        #expect(try await outcome(harness, url, options: .init(checksum: checksum)) == nil)
        await harness.shutdown()
    }

    @Test("a resumed download rehashes its prefix and verifies the whole file")
    func checksumAcrossPause() async throws {
        let harness = try await Harness.make()
        let size = 2_000_000
        let url = harness.origin.serve("/sum-pause.bin", size: size)
        let bytes = TestContent.bytes(0..<size)
        let digest = bytes.withUnsafeBytes {
            DigestHasher.hex(DigestHasher.digest(DigestAlgorithm(.sha256), of: $0))
        }
        harness.origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
        let id = try await harness.manager.add(
            url, options: .init(checksum: try Checksum(.sha256, hex: digest)))
        try await harness.waitForProgress(id, atLeast: 300_000)
        try await harness.manager.pause(id)
        harness.origin.setFaults { $0.bytesPerSecond = nil }
        try await harness.manager.resume(id)
        expectContent(try await harness.manager.wait(for: id), size: size)
        await harness.shutdown()
    }

    @Test("a checksum mismatch fails without a restart, nothing at the destination, the bytes kept in NAME.bad")
    func checksumMismatch() async throws {
        let harness = try await Harness.make()
        let url = harness.origin.serve("/bad-sum.bin", size: 100_000)
        let checksum = try Checksum(.sha256, hex: String(repeating: "0", count: 64))
        let events = await harness.manager.events()
        let restarts = Task {
            var count = 0
            for await event in events {
                if case .restarted = event.change { count += 1 }
                if case .status(.failed) = event.change { break }
            }
            return count
        }
        let error = try #require(try await outcome(harness, url, options: .init(checksum: checksum)))
        #expect(error.code == .checksumMismatch)
        #expect(error.summary.contains(String(repeating: "0", count: 64)))
        #expect(error.suggestion.contains("bad-sum.bin.bad"), "\(error.suggestion)")
        #expect(harness.directory.entries() == ["bad-sum.bin.bad", "state"])
        expectContent(harness.directory.file("bad-sum.bin.bad"), size: 100_000)
        #expect(await restarts.value == 0, "a checksum that fails is not a restart")
        #expect(harness.origin.requests(to: "/bad-sum.bin").count == 1)
        await harness.shutdown()
    }

    @Test("a resource that changes mid-download fails when the download says so, keeping its data")
    func failOnChange() async throws {
        let harness = try await Harness.make()
        let size = 1_000_000
        let url = harness.origin.serve("/strict.bin", size: size)
        harness.origin.setFaults {
            $0.cutAfter = 400_000
            $0.cutTimes = 1
        }
        let id = try await harness.manager.add(url, options: .init(onResourceChange: .fail))
        // Change the file right after the first response is cut.
        try await harness.waitForProgress(id, atLeast: 1)
        harness.origin.updateResource("/strict.bin") { $0.version = 2 }
        do {
            _ = try await harness.manager.wait(for: id)
            Issue.record("expected a failure")
        } catch {
            #expect(error.code == .resourceChanged)
        }
        let snapshot = try #require(await harness.manager.snapshot(id))
        #expect(snapshot.receivedBytes == 400_000)
        await harness.shutdown()
    }
}
