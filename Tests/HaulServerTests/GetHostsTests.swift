import Foundation
import HaulKit
import HaulTestSupport
import Testing

@testable import HaulServer

/// `haul.getHosts`: each host's request rate, backoff and last throttle, as the daemon sees them.
@Suite("haul.getHosts")
struct GetHostsTests {
    @Test("a host that answered 429 shows its throttle, its reason and its backoff; one that did not, none")
    func throttledHost() async throws {
        let harness = try await DaemonHarness.make()
        let origin = harness.origin
        try await harness.test { client in
            origin.requestLimit.limit(1, refusal: .tooManyRequests(retryAfter: 1))
            var gids: [String] = []
            for index in 0..<3 {
                let url = origin.serve("/limited\(index).bin", size: 1_000)
                gids.append(
                    try #require(
                        try await client.rpc("aria2.addUri", [[.string(url.absoluteString)]]).result?.stringValue))
            }
            for gid in gids { _ = try await client.waitForStatus(gid, "complete") }
            let answer = try await client.rpc("haul.getHosts")
            let hosts = try #require(answer.result?.arrayValue)
            let host = try #require(hosts.first { $0["host"] == "127.0.0.1" })
            #expect(host["reason"] == "429 Too Many Requests")
            #expect((host["throttles"]?.integerValue ?? 0) >= 1)
            #expect(host["lastThrottle"]?.stringValue != nil)
            #expect((host["requests"]?.integerValue ?? 0) >= 3)
            let methods = try await client.rpc("system.listMethods")
            #expect(methods.result?.arrayValue?.contains("haul.getHosts") == true)
        }
    }

    @Test(
        "no host before any download; with a count, at most that many, the held and throttled first; a bad count refused"
    )
    func countAndOrder() async throws {
        let harness = try await DaemonHarness.make()
        let origin = harness.origin
        try await harness.test { client in
            #expect(try await client.rpc("haul.getHosts").result == .array([]), "nothing contacted yet")
            #expect(try await client.rpc("haul.getHosts", [1]).result == .array([]))
            // A host that serves (named localhost), then one that answers 429 with a long Retry-After.
            let open = origin.serve("/open.bin", size: 1_000).absoluteString
                .replacingOccurrences(of: "127.0.0.1", with: "localhost")
            let openGID = try #require(try await client.rpc("aria2.addUri", [[.string(open)]]).result?.stringValue)
            _ = try await client.waitForStatus(openGID, "complete")
            origin.respond("/refused.bin", status: 429)
            origin.setFaults { $0.scripted = [(429, [("Retry-After", "600")])] }
            let refused = origin.url("/refused.bin").absoluteString
            _ = try await client.rpc("aria2.addUri", [[.string(refused)]])
            var held: JSONValue?
            let start = ContinuousClock.now
            while held == nil, start.duration(to: .now) < .seconds(15) {
                let first = try await client.rpc("haul.getHosts", [1]).result?.arrayValue?.first
                if let first, Self.seconds(first["heldFor"]) > 0 { held = first }
                try await Task.sleep(for: .milliseconds(50))
            }
            let host = try #require(held, "the held host comes first")
            #expect(host["host"] == "127.0.0.1")
            #expect(Self.seconds(host["heldFor"]) > 500)
            #expect(host["reason"] == "429 Too Many Requests")
            let all = try #require(try await client.rpc("haul.getHosts").result?.arrayValue)
            #expect(
                all.compactMap { $0["host"]?.stringValue } == ["127.0.0.1", "localhost"], "without a count: by name")
            let both = try #require(try await client.rpc("haul.getHosts", [2]).result?.arrayValue)
            #expect(both.compactMap { $0["host"]?.stringValue } == ["127.0.0.1", "localhost"])
            for bad: JSONValue in [0, 1_001, "ten"] {
                let answer = try await client.rpc("haul.getHosts", [bad])
                #expect(answer.errorMessage?.contains("from 1 to 1000") == true, "\(bad): \(answer.body)")
            }
        }
    }

    /// A number of seconds from the answer (a JSON number, whole or not); 0 for none.
    static func seconds(_ value: JSONValue?) -> Double {
        switch value {
        case .double(let seconds): seconds
        case .integer(let seconds): Double(seconds)
        default: 0
        }
    }
}
