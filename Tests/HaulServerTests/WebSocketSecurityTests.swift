import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import Synchronization
import Testing

@testable import HaulServer

/// Issue 45, items 11 and 12: a WebSocket session learns nothing before it authenticates (and is closed if it never
/// does), and takes requests as large as an HTTP body may be, in one frame as browsers send them.
@Suite("WebSocket sessions and strangers")
struct WebSocketSecurityTests {
    /// A client that sends frames of up to 4 MiB whole, as a browser does.
    static var largeFrames: WebSocketClientConfiguration {
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = 4 << 20
        return configuration
    }

    @Test("a session that made no authenticated call is told no notification; an authenticated one is")
    func strangersLearnNothing() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/n.bin", size: 100_000)
        let stranger = WebSocketTests.Received()
        let owner = WebSocketTests.Received()
        let done = Flag()
        try await harness.live { port in
            _ = try await withDeadline(.seconds(120), "the two sessions") {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await WebSocketClient.connect(
                            url: "ws://127.0.0.1:\(port)/jsonrpc", logger: Logger(label: "stranger")
                        ) { inbound, outbound, _ in
                            // A call that needs no token: the session stays unauthenticated.
                            try await outbound.write(.text(rpcCall("system.listMethods", token: nil).jsonText))
                            let closer = Task {
                                while !done.isSet { try await Task.sleep(for: .milliseconds(20)) }
                                try await Task.sleep(for: .milliseconds(300))
                                try await outbound.close(.normalClosure, reason: nil)
                            }
                            defer { closer.cancel() }
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                if case .text(let text) = message, let value = JSONValue(parsing: Data(text.utf8)) {
                                    stranger.append(value)
                                }
                            }
                        }
                    }
                    group.addTask {
                        // The stranger is connected before the download starts.
                        try await Task.sleep(for: .milliseconds(300))
                        try await WebSocketClient.connect(
                            url: "ws://127.0.0.1:\(port)/jsonrpc", logger: Logger(label: "owner")
                        ) { inbound, outbound, _ in
                            let add = rpcCall("aria2.addUri", [[.string(url.absoluteString)]], id: "a")
                            try await outbound.write(.text(add.jsonText))
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                guard case .text(let text) = message, let value = JSONValue(parsing: Data(text.utf8))
                                else { continue }
                                owner.append(value)
                                if value["method"] == "aria2.onDownloadComplete" { break }
                            }
                            done.set()
                            try await outbound.close(.normalClosure, reason: nil)
                        }
                    }
                    try await group.waitForAll()
                }
                return true
            }
        }
        #expect(owner.all.contains { $0["method"] == "aria2.onDownloadComplete" })
        #expect(stranger.all.contains { $0["result"] != nil }, "the stranger's own call was answered")
        #expect(!stranger.all.contains { $0["method"] != nil }, "\(stranger.all)")
    }

    @Test("a session that never authenticates is closed after the timeout")
    func strangersClosed() async throws {
        let harness = try await DaemonHarness.make { $0.webSocketAuthenticationTimeout = .milliseconds(500) }
        try await harness.live { port in
            let start = ContinuousClock.now
            _ = try await withDeadline(.seconds(30), "the stranger's session") {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/jsonrpc", logger: Logger(label: "stranger")
                ) { inbound, _, _ in
                    for try await _ in inbound.messages(maxSize: 1 << 20) {}
                }
                return true
            }
            #expect(start.duration(to: .now) < .seconds(20))
        }
    }

    @Test("requests of 20 KB and 1.5 MiB in one frame are answered; one over 2 MiB closes the session")
    func largeRequests() async throws {
        let harness = try await DaemonHarness.make()
        let answers = WebSocketTests.Received()
        try await harness.live { port in
            _ = try await withDeadline(.seconds(60), "the large requests") {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/jsonrpc", configuration: Self.largeFrames, logger: Logger(label: "big")
                ) { inbound, outbound, _ in
                    var messages = inbound.messages(maxSize: 4 << 20).makeAsyncIterator()
                    // Each answer is awaited before the next request: a frame over the limit ends the connection at
                    // once, whatever is still being answered.
                    for size in [20_000, 1_500_000, 2_200_000] {
                        let id = JSONValue.string(String(repeating: "x", count: size))
                        try await outbound.write(.text(rpcCall("system.listMethods", token: nil, id: id).jsonText))
                        guard case .text(let text)? = try await messages.next(),
                            let value = JSONValue(parsing: Data(text.utf8))
                        else { break }
                        answers.append(value)
                    }
                }
                return true
            }
        }
        let sizes = answers.all.compactMap { $0["id"]?.stringValue?.count }
        #expect(sizes == [20_000, 1_500_000], "answered in order; the one over the limit ended the session")
    }
}
