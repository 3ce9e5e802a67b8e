import Foundation
import HaulKit

extension Aria2Service {
    /// `haul.getHosts()`: every host's politeness state, the fleet's with a shared queue (see `docs/politeness.md`):
    /// `[{host, requests, requestLimit, policyRate, backoffRate, connectionCap, heldFor, lastThrottle, reason,
    /// throttles}]`, rates in requests per second, `heldFor` in seconds, `lastThrottle` an ISO 8601 time; absent
    /// fields are null. Every host by name; `haul.getHosts(count)` answers at most `count` (1 to
    /// ``HostRanking/maxCount``), those that need attention first (``HostRanking``): what the dashboard's hosts panel
    /// asks for, so that its answer stays small however many hosts the fleet talked to.
    func hosts(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let count = try HostRanking.count(in: params)
        var hosts: [HostStatus]
        do {
            hosts = try await manager.hosts()
        } catch {
            throw .failed(error.summary)
        }
        if let count { hosts = HostRanking.pressing(hosts, count: count) }
        let dates = ISO8601DateFormatter()
        return .array(
            hosts.map { host in
                .object([
                    "host": .string(host.host), "requests": .integer(Int64(host.requests)),
                    "requestLimit": host.requestLimit.map(JSONValue.double) ?? .null,
                    "policyRate": host.policyRate.map(JSONValue.double) ?? .null,
                    "backoffRate": host.backoffRate.map(JSONValue.double) ?? .null,
                    "connectionCap": host.connectionCap.map { .integer(Int64($0)) } ?? .null,
                    "heldFor": host.heldForSeconds.map(JSONValue.double) ?? .null,
                    "lastThrottle": host.lastThrottle.map { .string(dates.string(from: $0)) } ?? .null,
                    "reason": host.reason.map(JSONValue.string) ?? .null,
                    "throttles": .integer(Int64(host.throttles)),
                ])
            })
    }
}
