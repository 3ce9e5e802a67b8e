import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A webhook receiver on 127.0.0.1 for tests: records every POST (headers and body) in arrival order and answers
/// with the status set (200 by default), or holds its answers until released.
public final class WebhookReceiver: Sendable {
    /// One request received.
    public struct Delivery: Sendable {
        public var path: String
        /// Header names lowercased.
        public var headers: [String: String]
        public var body: Data
        /// Whether `X-Haul-Signature` is `sha256=` and the HMAC-SHA256 of the body under `secret`, computed here as a
        /// receiver would.
        public func isSigned(with secret: String) -> Bool {
            let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
            return headers["x-haul-signature"] == "sha256=" + code.map { String(format: "%02x", $0) }.joined()
        }

        /// The event's id, kind and download id, from the JSON body.
        public var event: (id: String, kind: String, download: Int)? {
            guard let json, let id = json["id"] as? String, let kind = json["event"] as? String,
                let download = (json["download"] as? [String: Any])?["id"] as? Int
            else { return nil }
            return (id, kind, download)
        }

        /// The body as a JSON object, if it is one.
        public var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        }
    }

    private struct State {
        var deliveries: [Delivery] = []
        var status = 200
        var holding = false
    }

    private let channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, Never>, Never>
    private let state = Mutex(State())
    private let serverTask = Mutex<Task<Void, Never>?>(nil)
    public let port: Int

    private init(channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, Never>, Never>) {
        self.channel = channel
        port = channel.channel.localAddress?.port ?? 0
    }

    /// Starts a receiver on a free port, or on `port` (one a stopped receiver had).
    public static func start(port: Int = 0) async throws -> WebhookReceiver {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: port) {
                (channel: any Channel) -> EventLoopFuture<NIOAsyncChannel<HTTPServerRequestPart, Never>> in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                    // Answers are written to the channel itself: no outbound writer, which NIO traps on if a
                    // connection accepted as the receiver stops is dropped unserved (swift-nio#2637).
                    return try NIOAsyncChannel<HTTPServerRequestPart, Never>(
                        wrappingChannelSynchronously: channel)
                }
            }
        let receiver = WebhookReceiver(channel: channel)
        receiver.serverTask.withLock { $0 = Task { await receiver.accept() } }
        return receiver
    }

    /// A free port of 127.0.0.1 that nothing listens on now (a receiver started there later is "back").
    public static func freePort() throws -> Int { try LocalPorts.free() }

    public func url(_ path: String = "/hook") -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Every POST so far, in arrival order.
    public var deliveries: [Delivery] { state.withLock { $0.deliveries } }

    /// Answers with `status` from now on.
    public func answer(_ status: Int) { state.withLock { $0.status = status } }

    /// While true, requests are recorded but not answered (the sender waits, or times out).
    public func hold(_ holding: Bool) { state.withLock { $0.holding = holding } }

    /// Stops listening and ends every connection.
    public func stop() async {
        try? await channel.channel.close()
        let task = serverTask.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    private func accept() async {
        try? await channel.executeThenClose { inbound in
            try await withThrowingDiscardingTaskGroup { group in
                defer { group.cancelAll() }
                for try await connection in inbound {
                    group.addTask { await self.serve(connection) }
                }
            }
        }
    }

    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, Never>) async {
        let channel = connection.channel
        try? await connection.executeThenClose { inbound, _ in
            var head: HTTPRequestHead?
            var body = Data()
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                    body = Data()
                case .body(let buffer):
                    body.append(contentsOf: buffer.readableBytesView)
                case .end:
                    guard let requestHead = head else { return }
                    var headers: [String: String] = [:]
                    for (name, value) in requestHead.headers { headers[name.lowercased()] = value }
                    state.withLock {
                        $0.deliveries.append(Delivery(path: requestHead.uri, headers: headers, body: body))
                    }
                    while state.withLock({ $0.holding }) { try await Task.sleep(for: .milliseconds(20)) }
                    let status = state.withLock { $0.status }
                    try await channel.writeAndFlush(
                        ByteBuffer(string: "HTTP/1.1 \(status) Status\r\nContent-Length: 0\r\n\r\n"))
                }
            }
        }
    }
}
