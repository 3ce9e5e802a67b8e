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
}
