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
    }

    /// How long every request must have failed before the host's downloads fail at once.
    let limit: Duration
    /// The least time between two probes of a host that is down.
    let probeInterval: Duration
    private(set) var outages: [String: Outage] = [:]

    init(limit: Duration, probeInterval: Duration) {
        self.limit = limit
        self.probeInterval = probeInterval
    }

    /// Decides whether a request may go to `route` (a host and port, or a proxy) at `now`.
    mutating func admit(_ route: String, at now: Duration) -> Admission {
        guard var outage = outages[route] else { return .send }
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

    /// Notes that a request to `route` failed at `now`, with `error`.
    mutating func failed(_ route: String, with error: DownloadError, at now: Duration) {
        var outage =
            outages[route] ?? Outage(since: now, lastFailure: now, failures: 0, lastError: error)
        outage.lastFailure = now
        outage.failures += 1
        outage.lastError = error
        outage.probing = false
        outages[route] = outage
    }

    /// Notes that `route` answered, or sent bytes: its outage, if any, is over.
    mutating func answered(_ route: String) {
        outages[route] = nil
    }

    /// Notes that a probe of `route` ended, however it ended (it may have been cancelled before connecting).
    mutating func probeEnded(_ route: String) {
        outages[route]?.probing = false
    }
}
