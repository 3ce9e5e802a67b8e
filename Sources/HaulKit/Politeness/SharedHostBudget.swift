/// Where a fleet keeps its hosts' politeness state, so every worker takes its requests from one schedule and backs off
/// together (HaulFleet's PostgreSQL table `haul_host`). Each call is one round trip; nil or false when the store cannot
/// be reached (the worker then paces on its own state).
package protocol SharedHostBudget: Sendable {
    /// Reserves the next request to `host`, at least `gap` after the previous one of the fleet (and the gaps the
    /// host's shared policy and backoff ask for). Returns the wait, the connections backoff allows (nil: no cap), and
    /// whether anything limits the host in the fleet (a policy, a backoff, a hold).
    nonisolated(nonsending) func reserveRequest(
        host: String, gap: Duration?, maxConnections: Int
    ) async -> (
        wait: Duration, connectionCap: Int?, limited: Bool
    )?
    /// Counts `count` requests to `host` sent without a reservation (nothing limited the host: they were only
    /// counted, in the host's requests and in its current window's, from which a throttle measures the rate).
    nonisolated(nonsending) func countRequests(host: String, count: Int) async
    /// Records a throttle of `host`: its reason, the hold it asked for, the connections open to it.
    nonisolated(nonsending) func recordThrottle(host: String, reason: String, hold: Duration?, connections: Int) async
    /// Records what the host announced: its policy's rate, and a hold while its budget is spent.
    nonisolated(nonsending) func recordPolicy(host: String, rate: Double?, hold: Duration?) async
    /// Every host's state.
    nonisolated(nonsending) func hostStatuses() async throws(DownloadError) -> [HostStatus]
}
