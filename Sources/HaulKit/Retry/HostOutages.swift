/// The hosts one manager finds down, as a value: for each, since when every request to it has failed. Pure: the
/// caller passes the time.
///
/// Without it, each download of a host that is down would try for its own ``RetryPolicy/maxTimeWithoutProgress``:
/// a list of 10,000 files at 16 at a time would take hours to fail. Once every request to a host (or to the proxy in
/// front of it) has failed for that long — no connection, no answer, a reset, 5xx, 408 or 429 — its downloads fail
/// at once with ``DownloadError/Code/hostDown``. One request at a time still tries, at most once per
/// ``RetryPolicy/maxDelay``, so a host that comes back is found; any other answer, or bytes arriving from the host,
/// ends the outage. Evidence older than the bound and the probe interval (no attempt since) is forgotten: a download
/// added long after gets its own tries.
struct HostOutages: Sendable, Equatable {
    /// Whether a request may go to a host.
    enum Admission: Sendable, Equatable {
        /// Send it: the host is not known to be down, or not for long enough.
        case send
        /// Send it as the one request that checks whether the host is back; ``probeEnded(_:)`` must follow.
        case probe
        /// Do not send it: the download fails with this error.
        case refuse(DownloadError)
    }

    /// One host that has failed every request since `since`.
    struct Outage: Sendable, Equatable {
        var since: Duration
        var lastFailure: Duration
        var failures: Int
        var lastError: DownloadError
        /// When the last probe was let through, if any.
        var lastProbe: Duration?
        var probing = false
        /// Failures that said the host cannot be reached at all (no such name, connection refused).
        var unreachableFailures = 0
    }

    /// How long every request must have failed before the host's downloads fail at once.
    let limit: Duration
    /// The least time between two probes of a host that is down.
    let probeInterval: Duration
    /// ``RetryPolicy/firstContactAttempts``: a host never answered that cannot be reached this many times fails at
    /// once; nil: no such rule.
    let firstContactAttempts: Int?
    private(set) var outages: [String: Outage] = [:]
    /// Hosts that answered at least once (kept only under the first-contact rule).
    private(set) var answeredOnce: Set<String> = []

    init(limit: Duration, probeInterval: Duration, firstContactAttempts: Int? = nil) {
        self.limit = limit
        self.probeInterval = probeInterval
        self.firstContactAttempts = firstContactAttempts
    }

    /// Decides whether a request may go to `route` (a host and port, or a proxy) at `now`.
    mutating func admit(_ route: String, at now: Duration) -> Admission {
        guard var outage = outages[route] else { return .send }
        if let unreachable = firstContactVerdict(outage, route) { return .refuse(unreachable) }
        if now - outage.lastFailure > max(limit, probeInterval) {
            outages[route] = nil  // nobody has tried for a whole bound or probe interval: the evidence is stale
            return .send
        }
        let down = now - outage.since
        guard down >= limit else { return .send }
        if !outage.probing, outage.lastProbe.map({ now - $0 >= probeInterval }) ?? true {
            outage.probing = true
            outage.lastProbe = now
            outages[route] = outage
            return .probe
        }
        return .refuse(.hostDown(route, for: down, attempts: outage.failures, last: outage.lastError))
    }

    /// Notes that a request to `route` failed at `now`, with `error`; `unreachable` when its name did not resolve or
    /// the connection was refused. Returns the final error that ends the request's download at once when the host
    /// has never answered and could not be reached ``firstContactAttempts`` times.
    @discardableResult
    mutating func failed(
        _ route: String, with error: DownloadError, unreachable: Bool = false, at now: Duration
    ) -> DownloadError? {
        var outage =
            outages[route] ?? Outage(since: now, lastFailure: now, failures: 0, lastError: error)
        outage.lastFailure = now
        outage.failures += 1
        outage.lastError = error
        outage.probing = false
        if unreachable { outage.unreachableFailures += 1 }
        outages[route] = outage
        return firstContactVerdict(outage, route)
    }

    /// The final error for a host that has never answered and could not be reached often enough, if it is one.
    private func firstContactVerdict(_ outage: Outage, _ route: String) -> DownloadError? {
        guard let attempts = firstContactAttempts, outage.unreachableFailures >= attempts,
            outage.unreachableFailures == outage.failures, !answeredOnce.contains(route)
        else { return nil }
        return .unreachable(route, attempts: outage.failures, last: outage.lastError)
    }

    /// Notes that `route` answered, or sent bytes: its outage, if any, is over.
    mutating func answered(_ route: String) {
        outages[route] = nil
        if firstContactAttempts != nil { answeredOnce.insert(route) }
    }

    /// Notes that a probe of `route` ended, however it ended (it may have been cancelled before connecting).
    mutating func probeEnded(_ route: String) {
        outages[route]?.probing = false
    }
}
