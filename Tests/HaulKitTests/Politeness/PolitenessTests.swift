import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// A manager against a rate-limited origin: the requests it sends to one host, how it backs off, and what a
/// throttled host does to another host's downloads.
@Suite("Politeness per host")
struct PolitenessTests {
    /// Small files at `path` prefix on `origin`, each with `headers`.
    static func files(
        _ origin: TestOrigin, _ count: Int, prefix: String, headers: [(String, String)] = []
    ) -> [URL] {
        (0..<count).map { index in
            var resource = TestOrigin.Resource(size: 2_000 + index)
            resource.headers = headers
            return origin.serve("/\(prefix)/\(index).bin", resource)
        }
    }

    @Test("with 10/s per host, no second sees more than 10 requests (plus one), and every file lands")
    func fixedRate() async throws {
        let harness = try await Harness.make {
            $0.maxConcurrentDownloads = 8
            $0.requestPacing = RequestPacing(maxRequestsPerHost: try! RequestRate(parsing: "10/s"))
        }
        let urls = Self.files(harness.origin, 25, prefix: "fixed")
        let started = ContinuousClock.now
        let ids = try await harness.manager.add(contentsOf: urls.map { ($0, nil, .init()) })
        for (index, id) in ids.enumerated() {
            expectContent(try await harness.manager.wait(for: id), size: 2_000 + index)
        }
        let elapsed = started.duration(to: .now)
        // The origin's clock is this test process's, busy with other tests: its arrivals bunch by a request or two.
        // The strict bound (10 plus one) is checked against nginx, a process of its own (PolitenessCommandTests).
        #expect(harness.origin.requestLimit.mostInAnySecond <= 13, "\(harness.origin.requestLimit.mostInAnySecond)")
        #expect(elapsed >= .seconds(2.3), "25 requests at 10/s take 2.4 s, took \(elapsed)")
        await harness.shutdown()
    }

    @Test("a host's RateLimit-Policy is learned: it paces the host under its quota, with no throttle after the start")
    func learnedPolicy() async throws {
        let harness = try await Harness.make { $0.maxConcurrentDownloads = 8 }
        harness.origin.requestLimit.limit(20)
        let urls = Self.files(
            harness.origin, 60, prefix: "policy", headers: [("RateLimit-Policy", "\"default\";q=20;w=1")])
        let ids = try await harness.manager.add(contentsOf: urls.map { ($0, nil, .init()) })
        for (index, id) in ids.enumerated() {
            expectContent(try await harness.manager.wait(for: id), size: 2_000 + index)
        }
        let limit = harness.origin.requestLimit
        let later = limit.refused(after: .seconds(1))
        // One at most: the origin's clock is this busy process's, and a bunch of two requests has met one 429 in
        // 43 (an unpaced host meets dozens).
        #expect(later.refused <= 1, "\(later.refused) of \(later.arrived) throttled after 1 s")
        // Never above the policy (plus a request or two: the origin's clock is this busy process's). The rate used is
        // measured by the fleet test, and on a quiet machine in docs/politeness.md (18/s, nothing refused).
        #expect(limit.mostInAnySecond <= 22, "\(limit.mostInAnySecond) in a second")
        let host = try #require(try await harness.manager.hosts().first)
        #expect(host.policyRate == 20)
        await harness.shutdown()
    }

    @Test("without a policy, 429s slow the host as a whole; every file completes and the backoff shows")
    func backoff() async throws {
        let harness = try await Harness.make { $0.maxConcurrentDownloads = 8 }
        harness.origin.requestLimit.limit(10)
        let urls = Self.files(harness.origin, 30, prefix: "aimd")
        let ids = try await harness.manager.add(contentsOf: urls.map { ($0, nil, .init()) })
        for (index, id) in ids.enumerated() {
            expectContent(try await harness.manager.wait(for: id), size: 2_000 + index)
        }
        let counts = harness.origin.requestLimit.counts
        // The first burst is refused; after it the whole host waits, so far fewer than one refusal per file.
        #expect(counts.refused < urls.count, "\(counts.refused) refusals for \(urls.count) files")
        let host = try #require(try await harness.manager.hosts().first)
        #expect(host.throttles >= 1)
        #expect(host.reason == "429 Too Many Requests")
        #expect(host.lastThrottle != nil)
        await harness.shutdown()
    }

    @Test("a host answering 503 SlowDown is backed off too")
    func slowDown() async throws {
        let harness = try await Harness.make { $0.maxConcurrentDownloads = 8 }
        // Every request is refused until the first refusal is seen, then 10 a second are served: on a busy machine
        // the requests could otherwise arrive slower than the limit and none be refused.
        let limit = harness.origin.requestLimit
        limit.limit(0, refusal: .slowDown)
        let urls = Self.files(harness.origin, 20, prefix: "slowdown")
        let ids = try await harness.manager.add(contentsOf: urls.map { ($0, nil, .init()) })
        let deadline = ContinuousClock.now + .seconds(20)
        while limit.counts.refused == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try #require(limit.counts.refused > 0, "no request reached the origin in 20 s")
        limit.limit(10, refusal: .slowDown)
        for (index, id) in ids.enumerated() {
            expectContent(try await harness.manager.wait(for: id), size: 2_000 + index)
        }
        let host = try #require(try await harness.manager.hosts().first)
        #expect(host.throttles >= 1)
        #expect(host.reason == "503 Service Unavailable")
        await harness.shutdown()
    }

    @Test("a host holding its downloads (Retry-After) gives their slots to another host's: its list is not slowed")
    func throttledHostDoesNotStarveAnother() async throws {
        let harness = try await Harness.make { $0.maxConcurrentDownloads = 2 }
        // Host 127.0.0.1 refuses everything for 60 s at a time; host localhost serves.
        harness.origin.requestLimit.limit(0, refusal: .tooManyRequests(retryAfter: 60))
        let other = try await TestOrigin.start()
        let throttled = try await harness.manager.add(
            contentsOf: Self.files(harness.origin, 4, prefix: "held").map { ($0, nil, .init()) })
        try await Task.sleep(for: .milliseconds(300))  // both slots are taken by the throttled host's downloads
        let started = ContinuousClock.now
        let urls = Self.files(other, 20, prefix: "free").map {
            URL(string: $0.absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost"))!
        }
        let ids = try await harness.manager.add(contentsOf: urls.map { ($0, nil, .init()) })
        for (index, id) in ids.enumerated() {
            expectContent(try await harness.manager.wait(for: id), size: 2_000 + index)
        }
        let elapsed = started.duration(to: .now)
        // Without the slots given back, the held host's downloads would keep both for 60 s (the bound allows for the
        // suite's load).
        #expect(elapsed < .seconds(30), "another host's 20 small files took \(elapsed) beside a held host")
        try await harness.manager.remove(throttled, deletingFiles: true)
        await harness.shutdown()
        await other.stop()
    }
}
