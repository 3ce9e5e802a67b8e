import Foundation
import HaulKit

/// The order of `haul.getHosts(count)` and of the dashboard's hosts panel: the hosts that need attention first, so
/// that a fleet that talked to thousands of hosts answers the few that throttle in a small reply.
///
/// First the hosts held now (a `Retry-After`, a spent budget; the longest hold first), then those backed off (a
/// request rate or a connection cap cut by a throttle), then the others by their last throttle (latest first; never
/// throttled last), then by requests sent (most first), then by name.
enum HostRanking {
    /// The most hosts one answer holds when a count is asked for.
    static let maxCount = 1_000

    /// `hosts` in the order above, at most `count` of them (all when nil).
    static func pressing(_ hosts: [HostStatus], count: Int? = nil) -> [HostStatus] {
        let ordered = hosts.sorted(by: comesFirst)
        guard let count else { return ordered }
        return Array(ordered.prefix(count))
    }

    /// Whether `a` needs attention before `b`.
    static func comesFirst(_ a: HostStatus, _ b: HostStatus) -> Bool {
        let heldA = a.heldForSeconds ?? 0
        let heldB = b.heldForSeconds ?? 0
        if (heldA > 0) != (heldB > 0) { return heldA > 0 }
        if heldA != heldB { return heldA > heldB }
        if isBackedOff(a) != isBackedOff(b) { return isBackedOff(a) }
        switch (a.lastThrottle, b.lastThrottle) {
        case (let x?, let y?) where x != y: return x > y
        case (.some, nil): return true
        case (nil, .some): return false
        default: break
        }
        if a.requests != b.requests { return a.requests > b.requests }
        return a.host < b.host
    }

    /// Whether a throttle cut the host's request rate or connections and it has not recovered yet.
    static func isBackedOff(_ host: HostStatus) -> Bool {
        host.backoffRate != nil || host.connectionCap != nil
    }

    /// The count asked for in `haul.getHosts`'s first parameter: nil when there is none (every host, by name).
    static func count(in params: Parameters) throws(RPCError) -> Int? {
        guard let first = params.values.first else { return nil }
        if case .null = first { return nil }
        guard let count = first.integerValue, (1...Int64(maxCount)).contains(count) else {
            throw .failed("haul.getHosts takes the most hosts to answer: a whole number from 1 to \(maxCount)")
        }
        return Int(count)
    }
}
