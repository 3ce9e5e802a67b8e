import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import HaulServer

/// aria2's JSON-RPC conventions, in process: envelopes, errors, statuses, authentication, batches, GET and JSONP.
@Suite("aria2 JSON-RPC protocol")
struct ProtocolTests {
    @Test("a call answers with aria2's envelope and values as strings")
    func envelope() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let version = try await client.rpc("aria2.getVersion")
            #expect(version.status == 200)
            #expect(version.body["jsonrpc"] == "2.0" && version.body["id"] == "t")
            #expect(version.result?["version"] == .string(Aria2Service.aria2Version))
            let features = version.result?["enabledFeatures"]?.arrayValue ?? []
            #expect(!features.contains("BitTorrent") && !features.contains("Metalink"))
            let stat = try await client.rpc("aria2.getGlobalStat")
            #expect(stat.result?["numActive"] == "0" && stat.result?["numWaiting"] == "0")
            #expect(stat.headers[.contentType] == "application/json-rpc")
        }
    }

    @Test("without the right token: 400, aria2's 'Unauthorized', and a delay; list methods need no token")
    func authentication() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let start = ContinuousClock.now
            let wrong = try await client.rpc("aria2.getVersion", token: "guess")
            #expect(start.duration(to: .now) >= .milliseconds(200), "failed authentication is delayed")
            #expect(wrong.status == 400)
            #expect(wrong.error == ["code": 1, "message": "Unauthorized"])
            let missing = try await client.rpc("aria2.tellActive", token: nil)
            #expect(missing.errorMessage == "Unauthorized")
            let methods = try await client.rpc("system.listMethods", token: nil)
            #expect(methods.result?.arrayValue?.contains("aria2.addUri") == true)
            let notifications = try await client.rpc("system.listNotifications", token: nil)
            #expect(notifications.result?.arrayValue?.count == 6)
        }
    }

    @Test("malformed requests get aria2's codes and HTTP statuses")
    func errors() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let unparsable = try await client.post("{not json")
            #expect(unparsable.status == 500 && unparsable.error?["code"] == -32700)
            let noMethod = try await client.post(#"{"jsonrpc":"2.0","id":1}"#)
            #expect(noMethod.status == 400 && noMethod.error?["code"] == -32600)
            let unknown = try await client.rpc("aria2.nosuch")
            #expect(unknown.status == 404 && unknown.error?["code"] == -32601)
            let badParams = try await client.post(#"{"jsonrpc":"2.0","id":1,"method":"aria2.tellActive","params":{}}"#)
            #expect(badParams.status == 500 && badParams.error?["code"] == -32602)
            let torrent = try await client.rpc("aria2.addTorrent", ["AAAA"])
            #expect(torrent.status == 400 && torrent.errorMessage?.contains("BitTorrent") == true)
            let gid = try await client.rpc("aria2.tellStatus", ["00000000000000ff"])
            #expect(gid.errorMessage == "GID 00000000000000ff is not found")
        }
    }

    @Test("a batch answers every call in order with 200; system.multicall wraps results and errors")
    func batchAndMulticall() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let batch = try await client.post(
                #"[{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:s3cret"]},"#
                    + #"{"jsonrpc":"2.0","id":2,"method":"aria2.getVersion","params":["token:no"]}]"#)
            #expect(batch.status == 200)
            let answers = batch.body.arrayValue ?? []
            #expect(answers.count == 2 && answers[0]["id"] == 1 && answers[1]["error"]?["message"] == "Unauthorized")
            let multicall = try await client.rpc(
                "system.multicall",
                [
                    [
                        ["methodName": "aria2.getGlobalStat", "params": ["token:s3cret"]],
                        ["methodName": "aria2.getGlobalStat", "params": []],
                    ]
                ], token: nil)
            let results = multicall.result?.arrayValue ?? []
            #expect(results.count == 2)
            #expect(results.first?.arrayValue?.first?["numActive"] == "0", "a result comes wrapped in an array")
            #expect(results.last?["message"] == "Unauthorized", "an error comes as its object")
        }
    }

    @Test("GET with base64 params, and JSONP with jsoncallback when enabled")
    func getAndJSONP() async throws {
        let harness = try await DaemonHarness.make { $0.enablesJSONP = true }
        try await harness.test { client in
            let params = Data(#"["token:s3cret"]"#.utf8).base64EncodedString()
            try await client.execute(
                uri: "/jsonrpc?method=aria2.getGlobalStat&id=7&params=\(params)&jsoncallback=cb", method: .get
            ) { response in
                let text = String(buffer: response.body)
                #expect(response.status == .ok)
                #expect(text.hasPrefix("cb({") && text.hasSuffix("})"))
                #expect(text.contains(#""id":"7""#))
                #expect(response.headers[.contentType] == "text/javascript")
            }
            try await client.execute(uri: "/jsonrpc?method=aria2.getVersion&id=1&jsoncallback=alert(1)", method: .get) {
                #expect($0.status == .badRequest, "a callback that is not a plain name is refused")
            }
        }
    }

    @Test("a page from a foreign origin is refused; an allowed one gets CORS, and its preflight is answered")
    func origins() async throws {
        let harness = try await DaemonHarness.make { $0.allowedOrigins = ["http://ui.example:8080"] }
        try await harness.test { client in
            let foreign = try await client.rpc("aria2.getVersion", headers: [.origin: "http://evil.example"])
            #expect(foreign.status == 403)
            let allowed = try await client.rpc("aria2.getVersion", headers: [.origin: "http://ui.example:8080"])
            #expect(allowed.status == 200)
            #expect(allowed.headers[.accessControlAllowOrigin] == "http://ui.example:8080")
            try await client.execute(
                uri: "/jsonrpc", method: .options, headers: [.origin: "http://ui.example:8080"]
            ) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.accessControlAllowMethods]?.contains("POST") == true)
            }
            try await client.execute(uri: "/jsonrpc", method: .options, headers: [.origin: "http://evil.example"]) {
                #expect($0.status == .forbidden)
            }
        }
    }

    @Test("a non-loopback host without a chosen secret is refused")
    func exposure() async throws {
        let directory = TemporaryDirectory()
        let manager = try await DownloadManager(
            configuration: .init(downloadDirectory: directory.url, databaseURL: directory.file("haul.sqlite")))
        var configuration = HaulDaemon.Configuration(secret: "generated")
        configuration.host = "0.0.0.0"
        #expect(throws: DownloadError.self) {
            _ = try HaulDaemon(configuration: configuration, manager: manager, secretWasGiven: false)
        }
        _ = try HaulDaemon(configuration: configuration, manager: manager, secretWasGiven: true)
        await manager.shutdown()
    }
}
