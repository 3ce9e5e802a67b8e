import Foundation
import Synchronization
import Testing

@testable import HaulKit

/// The URL a download's connections share, read without an actor: one refresh per expiry, its answer in place
/// before any connection that waited for it goes on.
@Suite("The URL a download's requests go to")
struct RequestTargetTests {
    /// A provider that answers only once released (each call on its own: two calls at once still count, and end),
    /// counting its calls.
    final class HeldProvider: Sendable {
        let calls = Mutex(0)
        private let released = Mutex(false)
        let answer: URL?

        init(answer: URL?) { self.answer = answer }

        var provider: URLProvider {
            { [self] _ in
                calls.withLock { $0 += 1 }
                // Bounded: a test that never releases fails on its answer, not by hanging.
                for _ in 0..<10_000 where !released.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(1)) }
                return answer
            }
        }

        func release() { released.withLock { $0 = true } }

        /// Waits (up to 10 s) until the provider has been asked.
        func asked() async throws {
            for _ in 0..<1_000 where calls.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            try #require(calls.withLock { $0 } > 0, "the provider was never asked")
        }
    }

    static let added = "http://example.test/file.bin?token=old"

    @Test("connections refused at once ask the provider once, and each finds the fresh URL in place when it goes on")
    func oneRefreshForAll() async throws {
        let fresh = URL(string: "http://example.test/file.bin?token=new")!
        let provider = HeldProvider(answer: fresh)
        let target = RequestTarget(
            id: DownloadID(rawValue: 7), url: Self.added, host: "example.test", provider: provider.provider)
        let (url, generation, _) = target.current
        #expect(url == Self.added)
        let seen = try await withThrowingTaskGroup(of: (RequestTarget.Refresh, String).self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let outcome = await target.refresh(from: generation, status: 403)
                    return (outcome, target.current.url)
                }
            }
            // The connections wait for the one question before it is answered.
            try await provider.asked()
            try await Task.sleep(for: .milliseconds(50))
            provider.release()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(provider.calls.withLock { $0 } == 1)
        #expect(seen.filter { $0.0 == .replaced }.count == 1)
        #expect(seen.allSatisfy { $0.0 != .unavailable })
        #expect(seen.allSatisfy { $0.1 == fresh.absoluteString }, "\(seen)")
        #expect(target.current.generation == generation + 1)
        // A connection refused with the old URL afterwards asks nobody.
        #expect(await target.refresh(from: generation, status: 403) == .replacedElsewhere)
        #expect(provider.calls.withLock { $0 } == 1)
    }

    @Test("a provider with nothing to give, or a URL that is not HTTP, leaves the URL as it was")
    func nothingFresh() async {
        for answer in [nil, URL(string: "ftp://example.test/file.bin")!] {
            let provider = HeldProvider(answer: answer)
            let target = RequestTarget(
                id: DownloadID(rawValue: 7), url: Self.added, host: "example.test", provider: provider.provider)
            provider.release()
            #expect(await target.refresh(from: 0, status: 410) == .unavailable)
            #expect(target.current.url == Self.added)
            #expect(target.current.generation == 0)
        }
        let without = RequestTarget(id: DownloadID(rawValue: 7), url: Self.added, host: "example.test", provider: nil)
        #expect(await without.refresh(from: 0, status: 403) == .unavailable)
        #expect(!without.canRefresh)
    }

    @Test("a mirror that takes over while the provider is asked keeps the requests; the late answer is dropped")
    func takeOverDuringRefresh() async throws {
        let provider = HeldProvider(answer: URL(string: "http://example.test/file.bin?token=new")!)
        let target = RequestTarget(
            id: DownloadID(rawValue: 7), url: Self.added, host: "example.test", provider: provider.provider)
        async let refreshed = target.refresh(from: 0, status: 403)
        try await provider.asked()
        target.takeOver(by: "http://mirror.test/file.bin")
        provider.release()
        #expect(await refreshed != .unavailable)
        #expect(target.current.url == "http://mirror.test/file.bin")
        #expect(target.current.generation == 1)
        #expect(target.current.home == Self.added)
    }

    @Test("a mirror that takes over gets the requests, and credentials stay with the added URL's origin")
    func takeOver() {
        let target = RequestTarget(id: DownloadID(rawValue: 7), url: Self.added, host: "example.test", provider: nil)
        #expect(target.current.home == nil)
        target.takeOver(by: "http://mirror.test/file.bin")
        #expect(target.current.url == "http://mirror.test/file.bin")
        #expect(target.current.generation == 1)
        #expect(target.current.home == Self.added)
        target.takeOver(by: "http://other.test/file.bin")
        #expect(target.current.home == Self.added)
        #expect(target.host == "example.test")
    }
}
