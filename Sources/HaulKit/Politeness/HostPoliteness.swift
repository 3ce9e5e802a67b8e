/// One host's request schedule and backoff, as a value: pure, fed with the time (``HostPacer`` owns the table).
///
/// - The schedule is a GCRA: `nextSlot` is when the next request may go; a request reserves it and pushes it on by
///   the gap it must keep, so requests leave evenly spaced and no second ever holds more than the rate (plus one).
/// - `holdUntil`: a `Retry-After` (or a spent `RateLimit` budget) holds every request to the host, not only the one
///   that got it; the requests let through afterwards leave one gap apart (jittered re-admission).
/// - Backoff: a throttle (429, 503, a reset under load) halves the host's request rate and its connections
///   (multiplicative decrease, at most once per ``decreaseSpacing``); each second of answers without one adds
///   ``recoveryShare`` of the rate it was throttled at (additive increase), and the limit is lifted once the rate is
///   twice that (or the connections are all back).
struct HostPoliteness: Sendable, Equatable {
    /// The rate is never cut below this (requests per second).
    static let lowestRate = 0.2
    /// Throttles closer together than this decrease once: the requests in flight were sent before the decrease.
    static let decreaseSpacing: Duration = .seconds(1)
    /// The share of the rate at the last decrease added back per second of good answers.
    static let recoveryShare = 0.05
    /// The factor a throttle multiplies the rate and the connections by.
    static let decrease = 0.5
    /// The factor a throttle multiplies the rate by when the host announced its policy and is paced under it: the
    /// throttle says the margin was too thin (requests that reached it closer together than they left), not that
    /// the rate is twice too high.
    static let decreaseUnderPolicy = 0.8
    /// The longest hold honoured (a longer `Retry-After` holds this long).
    static let longestHold: Duration = .seconds(3600)
    /// The learned policy is used at this share of its rate: a margin for requests the server counts differently.
    static let policyMargin = 0.9

    var nextSlot: Duration = .zero
    /// When the last request to the host actually went (see ``confirm(gap:at:)``).
    var lastSent: Duration?
    var holdUntil: Duration?
    /// The host's announced quota per second (`RateLimit-Policy`).
    var policyRate: Double?
    /// The rate backoff allows now (requests per second); nil: not backed off.
    var backoffRate: Double?
    /// The rate at the last decrease, which recovery counts from.
    var decreasedFrom: Double?
    /// The connections backoff allows now; nil: not backed off.
    var connectionCap: Int?
    var lastDecrease: Duration?
    var lastIncrease: Duration?
    var lastThrottle: Duration?
    var reason: String?
    var throttles = 0
    var requests = 0
    /// Times of the recent requests (at most ``recentLimit``), to measure the rate a throttle cuts.
    var recent: [Duration] = []
    static let recentLimit = 64

    /// The least gap between requests the host's own state asks for (policy, backoff), if any.
    var ownGap: Duration? {
        let rates = [policyRate.map { $0 * Self.policyMargin }, backoffRate].compactMap { $0 }
        guard let rate = rates.min(), rate > 0 else { return nil }
        return .seconds(1 / rate)
    }

    /// Reserves the next request's slot at `now`, keeping at least `gap` (the download's pacing) after it. Returns how
    /// long the request must wait (zero: send it now).
    mutating func reserve(gap: Duration?, at now: Duration) -> Duration {
        requests += 1
        recent.append(now)
        if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
        if let hold = holdUntil, hold <= now, gap == nil, ownGap == nil { holdUntil = nil }
        let spacing = [gap, ownGap].compactMap { $0 }.max()
        var start = max(now, nextSlot)
        if let hold = holdUntil, hold > start { start = hold }
        // After a hold, the requests waiting for it leave one gap apart, not all at once: without a rate, a tenth
        // of a second.
        let step = spacing ?? (holdUntil.map { $0 > now } == true ? .milliseconds(100) : .zero)
        nextSlot = start + step
        return start - now
    }

    /// Just before a request goes at `now`: how much longer it must wait so that it leaves at least its gap after the
    /// host's last request, and after any hold (zero: it goes now, noted as the last). Sleeps wake late on a busy
    /// machine, several at once: without this their requests would reach the host together.
    mutating func confirm(gap: Duration?, at now: Duration) -> Duration {
        if let hold = holdUntil, hold > now { return hold - now }
        if let spacing = [gap, ownGap].compactMap({ $0 }).max(), let last = lastSent, now - last < spacing {
            return spacing - (now - last)
        }
        lastSent = now
        return .zero
    }

    /// The request rate of the last requests (per second), if there were enough to tell.
    func measuredRate(at now: Duration) -> Double? {
        let window = recent.filter { now - $0 <= .seconds(5) }
        guard window.count >= 2, let first = window.first else { return nil }
        return Double(window.count) / max(1, (now - first).inSeconds)
    }

    /// A throttle at `now`: `why` for the record, `hold` the time the host asked for (`Retry-After`, a spent budget)
    /// or nil, `connections` how many were open to the host.
    mutating func throttled(_ why: String, hold: Duration?, connections: Int, at now: Duration) {
        throttles += 1
        lastThrottle = now
        reason = why
        if let hold, hold > .zero {
            let until = now + min(hold, Self.longestHold)
            holdUntil = max(holdUntil ?? .zero, until)
        }
        if let last = lastDecrease, now - last < Self.decreaseSpacing { return }
        // Under a known policy the cut starts from it (a rate measured over a burst says little); else from the
        // rate measured, or 2/s when nothing is known.
        let current: Double
        let factor: Double
        if let policyRate {
            current = min(backoffRate ?? policyRate, policyRate)
            factor = Self.decreaseUnderPolicy
        } else {
            current = [backoffRate, measuredRate(at: now)].compactMap { $0 }.min() ?? 2
            factor = Self.decrease
        }
        backoffRate = max(Self.lowestRate, current * factor)
        decreasedFrom = current
        connectionCap = max(1, Int((Double(connectionCap ?? max(1, connections)) * Self.decrease).rounded(.down)))
        lastDecrease = now
        lastIncrease = now
    }

    /// An answer that was no throttle, at `now`: recovery, at most once per second. `maxConnections`: the host's
    /// configured cap, at which the connection backoff ends.
    mutating func answered(maxConnections: Int, at now: Duration) {
        guard backoffRate != nil || connectionCap != nil else { return }
        let since = lastIncrease ?? now
        guard now - since >= .seconds(1) else { return }
        let seconds = (now - since).inSeconds
        lastIncrease = now
        if let rate = backoffRate, let from = decreasedFrom {
            let raised = rate + max(0.1, max(from, policyRate ?? 0) * Self.recoveryShare) * seconds
            backoffRate = raised >= from * 2 ? nil : raised
        }
        if let cap = connectionCap {
            connectionCap = cap + 1 >= maxConnections ? nil : cap + 1
        }
        if backoffRate == nil { decreasedFrom = nil }
    }

    /// Takes what a response said about the budget: the policy's rate, and a hold while the budget is spent. A new
    /// policy counts the requests of the last second against itself: the next slot comes after them, spaced at its
    /// rate (at most a second on), so the burst sent before it was known does not add to the paced ones.
    mutating func learn(_ headers: RateLimitHeaders, at now: Duration) {
        if let rate = headers.policyRate, rate != policyRate, rate > 0 {
            if policyRate == nil, let backoff = backoffRate {
                // A backoff guessed before the policy was known gives way to the cut the policy calls for.
                backoffRate = max(backoff, rate * Self.decreaseUnderPolicy)
                decreasedFrom = rate
            }
            policyRate = rate
            let window = recent.filter { now - $0 < .seconds(1) }
            if let first = window.first {
                let replayed = first + .seconds(Double(window.count) / (rate * Self.policyMargin))
                nextSlot = max(nextSlot, min(replayed, now + .seconds(1)))
            }
        }
        if headers.exhausted, let reset = headers.reset {
            holdUntil = max(holdUntil ?? .zero, now + min(reset, Self.longestHold))
        }
    }
}
