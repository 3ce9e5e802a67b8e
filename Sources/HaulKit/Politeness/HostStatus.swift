import Foundation

/// What Haul knows of one host's politeness state: its request rate, its backoff and its last throttle. With a shared
/// queue (HaulFleet) it is the fleet's, kept in the database; otherwise the process's.
public struct HostStatus: Sendable, Hashable, Codable {
    /// The host name, lowercased.
    public var host: String
    /// Requests sent to it (by this process, or by the fleet).
    public var requests: Int
    /// The quota per second its `RateLimit-Policy` announced, if any.
    public var policyRate: Double?
    /// The request rate backoff allows now (requests per second), nil when not backed off.
    public var backoffRate: Double?
    /// The connections backoff allows now, nil when not backed off.
    public var connectionCap: Int?
    /// How much longer every request to it waits (a `Retry-After`, a spent budget), if it is held.
    public var heldForSeconds: Double?
    /// When it last throttled (429, 503, a reset under load, a spent budget).
    public var lastThrottle: Date?
    /// Why, as a short phrase (`429 Too Many Requests`, `connection reset`).
    public var reason: String?
    /// How many throttles it answered.
    public var throttles: Int

    public init(
        host: String, requests: Int = 0, policyRate: Double? = nil, backoffRate: Double? = nil,
        connectionCap: Int? = nil, heldForSeconds: Double? = nil, lastThrottle: Date? = nil, reason: String? = nil,
        throttles: Int = 0
    ) {
        self.host = host
        self.requests = requests
        self.policyRate = policyRate
        self.backoffRate = backoffRate
        self.connectionCap = connectionCap
        self.heldForSeconds = heldForSeconds
        self.lastThrottle = lastThrottle
        self.reason = reason
        self.throttles = throttles
    }

    /// The request rate in force now (the smaller of the policy's, at its margin, and the backoff's), if any.
    public var requestLimit: Double? {
        [policyRate.map { $0 * HostPoliteness.policyMargin }, backoffRate].compactMap { $0 }.min()
    }
}
