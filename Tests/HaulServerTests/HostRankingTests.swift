import Foundation
import HaulKit
import Testing

@testable import HaulServer

/// The order of `haul.getHosts(count)` and the dashboard's hosts panel: the hosts that need attention first.
@Suite("HostRanking")
struct HostRankingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static let hosts = [
        HostStatus(host: "a.example", requests: 900),
        HostStatus(host: "b.example", requests: 20),
        HostStatus(host: "long-ago.example", requests: 5, lastThrottle: now.addingTimeInterval(-3_600), reason: "503"),
        HostStatus(host: "lately.example", requests: 5, lastThrottle: now.addingTimeInterval(-60), reason: "503"),
        HostStatus(host: "capped.example", requests: 1, connectionCap: 2, lastThrottle: now.addingTimeInterval(-7_200)),
        HostStatus(
            host: "slowed.example", requests: 1, backoffRate: 2, lastThrottle: now.addingTimeInterval(-10),
            reason: "429 Too Many Requests"),
        HostStatus(host: "held-briefly.example", heldForSeconds: 3, lastThrottle: now, reason: "429"),
        HostStatus(host: "held-long.example", heldForSeconds: 1_200, lastThrottle: now.addingTimeInterval(-1)),
        HostStatus(host: "c.example", requests: 20),
    ]

    @Test("held (longest first), then backed off (latest throttle first), then by last throttle, requests, name")
    func order() {
        let ordered = HostRanking.pressing(Self.hosts.shuffled()).map(\.host)
        #expect(
            ordered == [
                "held-long.example", "held-briefly.example", "slowed.example", "capped.example", "lately.example",
                "long-ago.example", "a.example", "b.example", "c.example",
            ])
    }

    @Test("a count keeps the first of that order; none keeps all")
    func count() {
        #expect(
            HostRanking.pressing(Self.hosts, count: 3).map(\.host) == [
                "held-long.example", "held-briefly.example", "slowed.example",
            ])
        #expect(HostRanking.pressing(Self.hosts, count: 100).count == Self.hosts.count)
        #expect(HostRanking.pressing([], count: 5).isEmpty)
    }

    @Test("a hold that is over (0 s) is no hold; a cap alone is a backoff")
    func expiredHold() {
        let over = HostStatus(host: "over.example", requests: 50, heldForSeconds: 0)
        let capped = HostStatus(host: "capped.example", connectionCap: 1)
        #expect(HostRanking.pressing([over, capped]).map(\.host) == ["capped.example", "over.example"])
        #expect(HostRanking.isBackedOff(capped) && !HostRanking.isBackedOff(over))
    }

    @Test("the count parameter: absent or null is every host; a whole number from 1 to 1000; anything else refused")
    func countParameter() throws {
        #expect(try HostRanking.count(in: Parameters([])) == nil)
        #expect(try HostRanking.count(in: Parameters([.null])) == nil)
        #expect(try HostRanking.count(in: Parameters([101])) == 101)
        #expect(try HostRanking.count(in: Parameters([.double(7)])) == 7)
        for bad: JSONValue in [0, -1, 1_001, .double(2.5), "10", .bool(true), .object([:])] {
            #expect(throws: RPCError.self, "\(bad)") { try HostRanking.count(in: Parameters([bad])) }
        }
    }
}
