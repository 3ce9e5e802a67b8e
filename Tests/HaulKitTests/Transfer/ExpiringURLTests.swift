import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// Signed URLs that expire mid-download, and the provider that gives fresh ones.
@Suite("Expiring URLs")
struct ExpiringURLTests {
    /// Counts the provider's calls and answers with `token`'s URL for the path.
    final class Provider: Sendable {
        let calls = Mutex<[URLRefresh]>([])
        let answer: @Sendable (URLRefresh) -> URL?

        init(answer: @escaping @Sendable (URLRefresh) -> URL?) { self.answer = answer }

        var provider: URLProvider {
            { [self] request in
                calls.withLock { $0.append(request) }
                return answer(request)
            }
        }
    }

    static func signed(_ origin: TestOrigin, _ path: String, token: String) -> URL {
        URL(string: origin.url(path).absoluteString + "?token=\(token)")!
    }

    @Test(
        "a URL that expires mid-download is replaced once for all connections; the download continues from its bytes",
        arguments: [1, 4])
    func expiresMidway(connections: Int) async throws {
        let origin = try await TestOrigin.start()
        let provider = Provider { _ in Self.signed(origin, "/signed.bin", token: "second") }
        let harness = try await Harness.make(origin: origin) {
            $0.urlProvider = provider.provider
            $0.minimumSegmentSize = 256 * 1024
        }
        let size = 3 * 1024 * 1024 + 11
        var resource = TestOrigin.Resource(size: size)
        resource.validTokens = ["first"]
        origin.serve("/signed.bin", resource)
        origin.setFaults { $0.bytesPerSecond = 3 * 1024 * 1024 }
        let added = Self.signed(origin, "/signed.bin", token: "first")
        let id = try await harness.manager.add(added, options: .init(connections: connections))
        try await harness.waitForProgress(id, atLeast: 1024 * 1024)
        origin.updateResource("/signed.bin") { $0.validTokens = ["second"] }
        origin.setFaults { $0.bytesPerSecond = nil }
        // The responses under way end: every connection asks again, with the expired token.
        origin.dropOpenResponses()
        expectContent(try await harness.manager.wait(for: id), size: size)

        let calls = provider.calls.withLock { $0 }
        #expect(calls.count == 1, "\(calls)")
        #expect(calls.first?.url == added)
        #expect(calls.first?.refusedURL == added)
        #expect(calls.first?.status == 403)
        let requests = origin.requests(to: "/signed.bin")
        let refused = requests.filter { $0.status == 403 }
        #expect(!refused.isEmpty)
        // The fresh URL continued from the bytes on disk: ranges from past the start, with the same validator, and
        // never a whole new copy (what dropped connections had in flight is fetched again, nothing more).
        let fresh = requests.filter { $0.target.hasSuffix("token=second") }
        #expect(!fresh.isEmpty)
        #expect(fresh.allSatisfy { $0.status == 206 && $0.ifRange == resource.etag }, "\(fresh.map(\.status))")
        let starts = fresh.compactMap { $0.range.flatMap { Int($0.dropFirst(6).prefix { $0 != "-" }) } }
        #expect(starts.min().map { $0 > 0 } == true, "\(starts)")
        #expect(requests.filter { $0.status == 200 }.isEmpty)
        #expect(origin.bodyBytesSent(to: "/signed.bin") < 2 * size)
        #expect(await harness.manager.snapshot(id)?.url == added)
        await harness.shutdown()
    }

    @Test("no provider, or one with nothing to give: the refusal fails the download as before")
    func noFreshURL() async throws {
        for withProvider in [false, true] {
            let origin = try await TestOrigin.start()
            let provider = Provider { _ in nil }
            let harness = try await Harness.make(origin: origin) {
                if withProvider { $0.urlProvider = provider.provider }
            }
            var resource = TestOrigin.Resource(size: 100_000)
            resource.validTokens = ["valid"]
            origin.serve("/gone.bin", resource)
            let id = try await harness.manager.add(Self.signed(origin, "/gone.bin", token: "expired"))
            let error = try await #require(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
            #expect(error.httpStatus == 403)
            #expect(provider.calls.withLock { $0.count } == (withProvider ? 1 : 0))
            await harness.shutdown()
        }
    }

    @Test("a provider whose URLs are refused too is asked a bounded number of times, then the download fails")
    func boundedRefreshes() async throws {
        let origin = try await TestOrigin.start()
        let provider = Provider { _ in Self.signed(origin, "/never.bin", token: "also-expired") }
        let harness = try await Harness.make(origin: origin) {
            $0.urlProvider = provider.provider
            $0.retry.maxURLRefreshes = 3
        }
        var resource = TestOrigin.Resource(size: 100_000)
        resource.validTokens = ["valid"]
        origin.serve("/never.bin", resource)
        let id = try await harness.manager.add(Self.signed(origin, "/never.bin", token: "expired"))
        let error = try await #require(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
        #expect(error.httpStatus == 403)
        #expect(error.summary.contains("gave up after 3 fresh URLs"), "\(error.summary)")
        #expect(provider.calls.withLock { $0.count } == 3)
        #expect(origin.requests(to: "/never.bin").count == 4)
        await harness.shutdown()
    }

    @Test("a fresh URL that serves another version restarts from 0, never splicing")
    func freshURLServesAnotherVersion() async throws {
        let origin = try await TestOrigin.start()
        let provider = Provider { _ in Self.signed(origin, "/v2.bin", token: "new") }
        let harness = try await Harness.make(origin: origin) { $0.urlProvider = provider.provider }
        let size = 2 * 1024 * 1024
        var old = TestOrigin.Resource(size: size)
        old.validTokens = ["old"]
        origin.serve("/v1.bin", old)
        var new = TestOrigin.Resource(size: size)
        new.version = 2
        new.validTokens = ["new"]
        origin.serve("/v2.bin", new)
        origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
        let id = try await harness.manager.add(Self.signed(origin, "/v1.bin", token: "old"))
        try await harness.waitForProgress(id, atLeast: 512 * 1024)
        origin.updateResource("/v1.bin") { $0.validTokens = [] }
        origin.setFaults { $0.bytesPerSecond = nil }
        origin.dropOpenResponses()
        expectContent(try await harness.manager.wait(for: id), size: size, version: 2)
        #expect(origin.requests(to: "/v2.bin").first?.status == 200)
        await harness.shutdown()
    }
}
