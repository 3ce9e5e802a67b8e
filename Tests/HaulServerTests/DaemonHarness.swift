import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import HaulServer

/// A daemon on a fresh directory and database, with a test origin to download from.
struct DaemonHarness {
    static let secret = "s3cret"

    let directory: TemporaryDirectory
    let origin: TestOrigin
    let manager: DownloadManager
    let daemon: HaulDaemon

    static func make(
        directory: TemporaryDirectory = TemporaryDirectory(),
        _ configure: (inout HaulDaemon.Configuration) -> Void = { _ in }
    ) async throws -> DaemonHarness {
        let origin = try await TestOrigin.start()
        var managerConfiguration = DownloadManager.Configuration(
            downloadDirectory: directory.url.appendingPathComponent("downloads"),
            databaseURL: directory.file("state/haul.sqlite"))
        managerConfiguration.retry.initialDelay = .milliseconds(10)
        managerConfiguration.retry.maxDelay = .milliseconds(50)
        managerConfiguration.progressInterval = .milliseconds(50)
        try FileManager.default.createDirectory(
            at: managerConfiguration.downloadDirectory, withIntermediateDirectories: true)
        let manager = try await DownloadManager(configuration: managerConfiguration)
        var configuration = HaulDaemon.Configuration(secret: secret)
        // In-process router tests send `Host: localhost`, as a browser does to port 80; the daemon is never bound to it
        // (live tests bind a free port, which the daemon then answers to).
        configuration.port = 80
        configuration.unauthorizedDelay = .milliseconds(200)
        configure(&configuration)
        let daemon = try HaulDaemon(configuration: configuration, manager: manager)
        return DaemonHarness(directory: directory, origin: origin, manager: manager, daemon: daemon)
    }

    var downloads: URL { manager.configuration.downloadDirectory }

    /// Runs `test` against the daemon's routes in process.
    func test<Value: Sendable>(_ test: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        do {
            let value = try await daemon.makeApplication().test(.router, test)
            await stop()
            return value
        } catch {
            await stop()
            throw error
        }
    }

    /// Runs `test` against the daemon listening on a free port of 127.0.0.1: real sockets, so the connection guard,
    /// the framework's limits and the WebSocket upgrade take part.
    func live<Value: Sendable>(_ test: @Sendable (_ port: Int) async throws -> Value) async throws -> Value {
        do {
            let value = try await daemon.makeApplication().test(.live) { client in
                try await test(try #require(client.port))
            }
            await stop()
            return value
        } catch {
            await stop()
            throw error
        }
    }

    func stop() async {
        await manager.shutdown()
        await origin.stop()
    }
}

/// A JSON-RPC call object as clients send it: `token:<token>` first unless `token` is nil.
func rpcCall(
    _ method: String, _ params: [JSONValue] = [], token: String? = DaemonHarness.secret, id: JSONValue = "t"
) -> JSONValue {
    [
        "jsonrpc": "2.0", "id": id, "method": .string(method),
        "params": .array((token.map { [JSONValue.string("token:\($0)")] } ?? []) + params),
    ]
}

/// One JSON-RPC answer as the tests read it.
struct RPCAnswer: Sendable {
    let status: Int
    let body: JSONValue
    let headers: HTTPFields

    var result: JSONValue? { body["result"] }
    var error: JSONValue? { body["error"] }
    var errorMessage: String? { error?["message"]?.stringValue }
}

extension TestClientProtocol {
    /// Calls `method` over `POST /jsonrpc`, with the token first unless `token` is nil.
    func rpc(
        _ method: String, _ params: [JSONValue] = [], token: String? = DaemonHarness.secret,
        headers: HTTPFields = [:]
    ) async throws -> RPCAnswer {
        try await post(rpcCall(method, params, token: token).jsonText, headers: headers)
    }

    /// Posts raw text to `/jsonrpc`.
    func post(_ text: String, headers: HTTPFields = [:]) async throws -> RPCAnswer {
        try await execute(uri: "/jsonrpc", method: .post, headers: headers, body: ByteBuffer(string: text)) {
            response in
            RPCAnswer(
                status: Int(response.status.code), body: JSONValue(parsing: Data(buffer: response.body)) ?? .null,
                headers: response.headers)
        }
    }

    /// Polls `tellStatus` until the download reaches `status`.
    func waitForStatus(_ gid: String, _ status: String, timeout: Duration = .seconds(20)) async throws -> JSONValue {
        let start = ContinuousClock.now
        while true {
            let answer = try await rpc("aria2.tellStatus", [.string(gid)])
            if answer.result?["status"]?.stringValue == status, let result = answer.result { return result }
            if start.duration(to: .now) > timeout {
                Issue.record("\(gid) did not reach \(status): \(answer.body.jsonText)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
