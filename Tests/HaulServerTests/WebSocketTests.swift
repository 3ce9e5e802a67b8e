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

/// The WebSocket at `/jsonrpc`: requests answered on the socket, aria2's notifications in order, Haul's progress
/// feed after `haul.subscribe`.
@Suite("WebSocket sessions")
struct WebSocketTests {
    /// Messages a client received, in order.
    final class Received: Sendable {
        let messages = Mutex<[JSONValue]>([])
        func append(_ value: JSONValue) { messages.withLock { $0.append(value) } }
        var all: [JSONValue] { messages.withLock { $0 } }
    }

    @Test("requests over the socket, then start and complete notifications in order, with progress once subscribed")
    func notifications() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/ws.bin", size: 3_000_000)
        harness.origin.setFaults { $0.bytesPerSecond = 4_000_000 }
        let received = Received()
        try await harness.daemon.makeApplication().test(.live) { client in
            let port = try #require(client.port)
            // A guard against a hang, not a speed test: the whole suite starts at once on two cores.
            _ = try await withDeadline(.seconds(120), "the WebSocket session") {
                try await Self.session(port: port, url: url, received: received)
            }
        }
        await harness.stop()
        let all = received.all
        #expect(all.first { $0["id"] == "s" }?["result"] == "OK")
        let gid = try #require(all.first { $0["id"] == "a" }?["result"]?.stringValue)
        let methods = all.compactMap { $0["method"]?.stringValue }
        let aria2 = methods.filter { $0.hasPrefix("aria2.") }
        #expect(aria2 == ["aria2.onDownloadStart", "aria2.onDownloadComplete"])
        let progress = all.filter { $0["method"] == "haul.onDownloadProgress" }
        #expect(!progress.isEmpty, "a subscribed session is told the progress")
        #expect(progress.allSatisfy { $0["params"]?.arrayValue?.first?["gid"]?.stringValue == gid })
        let start = all.first { $0["method"] == "aria2.onDownloadStart" }
        #expect(start?["params"] == [["gid": .string(gid)]])
    }

    /// Subscribes, adds `url`, and records every message until the download completes.
    static func session(port: Int, url: URL, received: Received) async throws -> Bool {
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/jsonrpc", logger: Logger(label: "ws-test")
        ) { inbound, outbound, _ in
            let subscribe: JSONValue = [
                "jsonrpc": "2.0", "id": "s", "method": "haul.subscribe", "params": ["token:s3cret"],
            ]
            try await outbound.write(.text(subscribe.jsonText))
            let add: JSONValue = [
                "jsonrpc": "2.0", "id": "a", "method": "aria2.addUri",
                "params": ["token:s3cret", [.string(url.absoluteString)]],
            ]
            try await outbound.write(.text(add.jsonText))
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message, let value = JSONValue(parsing: Data(text.utf8)) else {
                    continue
                }
                received.append(value)
                if value["method"] == "aria2.onDownloadComplete" { break }
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
        return true
    }

    @Test("a WebSocket from a foreign origin is not opened")
    func foreignOrigin() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.daemon.makeApplication().test(.live) { client in
            let port = try #require(client.port)
            var configuration = WebSocketClientConfiguration()
            configuration.additionalHeaders = [.origin: "http://evil.example"]
            await #expect(throws: (any Error).self) {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/jsonrpc", configuration: configuration,
                    logger: Logger(label: "ws-test")
                ) { _, _, _ in }
            }
        }
        await harness.stop()
    }
}
