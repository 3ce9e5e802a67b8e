import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import HaulServer

/// Issue 45, item 1: no request, with or without a token, makes the daemon hold more than a bounded amount: calls per
/// batch and per multicall, the body, the answer, and how deep the JSON nests are all capped.
@Suite("request and answer limits")
struct RequestLimitTests {
    @Test("a batch of more calls than allowed is refused whole, with one error and no answer per call")
    func batchCap() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let entry = #"{"jsonrpc":"2.0","id":1,"method":"system.listMethods"}"#
            let over = try await client.post("[" + Array(repeating: entry, count: 1_001).joined(separator: ",") + "]")
            #expect(over.status == 400)
            #expect(over.body.arrayValue == nil, "one error object, not an answer per call")
            #expect(over.error?["code"] == -32001)
            let within = try await client.post("[" + Array(repeating: entry, count: 1_000).joined(separator: ",") + "]")
            #expect(within.body.arrayValue?.count == 1_000)
        }
    }

    @Test("a system.multicall of more calls than allowed is refused whole")
    func multicallCap() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let calls = JSONValue.array(Array(repeating: ["methodName": "system.listNotifications"], count: 1_001))
            let answer = try await client.rpc("system.multicall", [calls], token: nil)
            #expect(answer.error?["code"] == -32001)
            #expect(answer.result == nil)
        }
    }

    @Test("a body over 2 MiB is refused with 413 before it is parsed; one just under is read")
    func bodyCap() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let padding = String(repeating: "a", count: 2 << 20)
            let over = try await client.post(#"{"jsonrpc":"2.0","id":"\#(padding)","method":"system.listMethods"}"#)
            #expect(over.status == 413)
            #expect(over.error?["code"] == -32004)
            let under = String(repeating: "a", count: (2 << 20) - 100)
            let read = try await client.post(#"{"jsonrpc":"2.0","id":"\#(under)","method":"system.listMethods"}"#)
            #expect(read.status == 200)
        }
    }

    @Test("an answer over the limit becomes an error, found as the batch or multicall grows")
    func answerCap() async throws {
        let harness = try await DaemonHarness.make { $0.rpcLimits.responseBytes = 20_000 }
        try await harness.test { client in
            let single = try await client.rpc("system.listMethods", token: nil)
            #expect(single.status == 200, "one list of methods fits")
            let entry = #"{"jsonrpc":"2.0","id":1,"method":"system.listMethods"}"#
            let batch = try await client.post("[" + Array(repeating: entry, count: 100).joined(separator: ",") + "]")
            #expect(batch.error?["code"] == -32002)
            #expect(batch.body.arrayValue == nil)
            let calls = JSONValue.array(Array(repeating: ["methodName": "system.listMethods"], count: 100))
            let multicall = try await client.rpc("system.multicall", [calls], token: nil)
            #expect(multicall.error?["code"] == -32002)
        }
    }

    @Test("JSON nested deeper than any call needs is a parse error, not a crash")
    func deepNesting() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let deep = String(repeating: "[", count: 500_000) + String(repeating: "]", count: 500_000)
            let answer = try await client.post(deep)
            #expect(answer.status == 500 && answer.error?["code"] == -32700)
            // Deeper than a call needs, though within what the JSON decoder itself takes.
            let hundred = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
            #expect(try await client.post(hundred).error?["code"] == -32700)
            let inString =
                #"{"jsonrpc":"2.0","id":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[","method":"system.listMethods"}"#
            #expect(try await client.post(inString).status == 200, "brackets inside a string do not count")
        }
    }

    @Test("an id that is not a string, a number or null is refused: the answer echoes no object")
    func objectIdentifier() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let answer = try await client.post(#"{"jsonrpc":"2.0","id":{"a":[1,2,3]},"method":"system.listMethods"}"#)
            #expect(answer.status == 400 && answer.error?["code"] == -32600)
            #expect(answer.body["id"] == .null)
        }
    }

    @Test(
        "byte counts match the text the writer writes",
        arguments: [
            .null, true, 12, .double(-3.5), "plain", "quote \" backslash \\ newline \n tab \t bell \u{7}",
            ["a": [1, 2, ["b": "c"]], "é": "ü"], [],
        ] as [JSONValue])
    func byteCount(_ value: JSONValue) {
        #expect(JSONWriter.byteCount(value, upTo: 10_000) == value.jsonText.utf8.count)
        #expect(JSONWriter.byteCount(value, upTo: value.jsonText.utf8.count - 1) == nil)
    }
}
