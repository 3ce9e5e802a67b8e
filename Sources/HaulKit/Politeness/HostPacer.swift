import Foundation
import Synchronization

/// The request schedules and backoff of every host one manager talks to (``HostPoliteness`` each), shared by all its
/// requests; with a ``SharedHostBudget`` (a fleet), the schedule and the backoff are the fleet's.
///
/// While nothing limits a host (no pacing asked, no policy announced, no throttle seen) a request costs one lock
/// and no wait.
final class HostPacer: Sendable {
    private struct Table: Sendable {
        var hosts: [String: HostPoliteness] = [:]
        /// Requests sent and not yet answered, by host: the connections a throttle halves.
        var inFlight: [String: Int] = [:]
        /// The policy rate last sent to the shared budget, by host (it is sent only when it changes).
        var sharedPolicy: [String: Double] = [:]
        /// The connection caps the shared budget last gave, by host.
        var sharedCaps: [String: Int] = [:]
        /// Hosts the fleet's schedule said something limits (its answer to the last look), and when each host was
        /// last looked up there.
        var fleetLimited: Set<String> = []
        var lastFleetLook: [String: Duration] = [:]
        var firstFleetLook: [String: Duration] = [:]
        /// Hosts whose first look in the fleet's schedule has come back (answered or not).
        var fleetLooked: Set<String> = []
        /// Requests sent to a host without a look in the fleet's schedule, not yet counted there.
        var uncounted: [String: Int] = [:]
        /// Hosts that answered at least once (a reset from one of them is load shedding, not an outage).
        var answeredOnce: Set<String> = []
    }

    private let table = Mutex(Table())
    private let stopwatch: Stopwatch
    private let clock: any Clock<Duration>
    /// The pacing every request gets (``DownloadManager/Configuration/requestPacing``); a download's own is added.
    let defaultPacing: RequestPacing?
    let maxConnections: Int
    let shared: (any SharedHostBudget)?
    /// A wait at least this long gives the download's slot to another host's download meanwhile.
    static let slotYieldThreshold: Duration = .seconds(1)

    init(
        pacing: RequestPacing?, maxConnections: Int, shared: (any SharedHostBudget)?, clock: any Clock<Duration>
    ) {
        defaultPacing = pacing.flatMap { $0.isEmpty ? nil : $0 }
        self.maxConnections = maxConnections
        self.shared = shared
        self.clock = clock
        stopwatch = Stopwatch(clock)
    }

    /// Waits until a request to `host` may go, under `pacing` (the download's) and the host's state. A long wait gives
    /// the download's slot away meanwhile (`slot`).
    func pace(_ host: String, pacing: RequestPacing?, slot: SlotYield?) async throws {
        guard !host.isEmpty else { return }
        let merged = defaultPacing.map { $0.strictest(with: pacing) } ?? pacing
        let gap = merged?.interval(random: Double.random(in: 0...1))
        var wait: Duration
        let now = stopwatch.elapsed
        // The fleet's schedule is asked when something limits the host (a gap, its policy, a backoff or a hold, here
        // or in the fleet), else only now and then (``fleetLookInterval``), to learn whether another worker saw it
        // throttle or learned its policy: a round trip per request to a host nothing limits would cap a worker's small
        // files at about one per round trip (the row's lock makes them take turns). The requests sent between two
        // looks are counted at the next one (or before a throttle or policy is recorded), so the fleet counts every
        // request, and a policy counts the burst sent before it was known against itself.
        // `look`: nil for none, else the requests sent since the last one, counted before it.
        let look: Int? =
            shared == nil
            ? nil
            : table.withLock { table in
                let state = table.hosts[host]
                let limited =
                    gap != nil || state?.ownGap != nil || (state?.holdUntil.map { $0 > now } ?? false)
                    || table.fleetLimited.contains(host)
                let first = table.firstFleetLook[host] ?? now
                table.firstFleetLook[host] = first
                // Until the first look has come back, every request looks: the host may be limited in the fleet.
                let due =
                    !table.fleetLooked.contains(host)
                    || table.lastFleetLook[host].map { now - $0 >= Self.fleetLookInterval(since: now - first) } ?? true
                guard limited || due else {
                    table.uncounted[host, default: 0] += 1
                    return nil
                }
                table.lastFleetLook[host] = now
                return table.uncounted.removeValue(forKey: host) ?? 0
            }
        if let shared, let look {
            table.withLock {
                $0.inFlight[host, default: 0] += 1
                _ = $0.hosts[host, default: HostPoliteness()].reserve(gap: nil, at: now)
            }
            if look > 0 { await shared.countRequests(host: host, count: look) }
            let answer = await shared.reserveRequest(host: host, gap: gap, maxConnections: maxConnections)
            table.withLock { _ = $0.fleetLooked.insert(host) }
            if let answer {
                wait = answer.wait
                table.withLock {
                    $0.sharedCaps[host] = answer.connectionCap
                    if answer.limited { $0.fleetLimited.insert(host) } else { $0.fleetLimited.remove(host) }
                }
            } else {
                wait = table.withLock { $0.hosts[host]?.ownGap ?? .zero }  // the store is away: keep a gap anyway
                if let gap { wait = max(wait, gap) }
            }
        } else {
            wait = table.withLock {
                $0.inFlight[host, default: 0] += 1
                return $0.hosts[host, default: HostPoliteness()].reserve(gap: gap, at: now)
            }
        }
        do {
            if wait > .zero {
                if let slot, wait >= Self.slotYieldThreshold {
                    try await slot.away(for: wait, host: host, clock: clock)
                } else {
                    try await clock.sleep(for: wait)
                }
            }
            // The request goes only once its gap since the host's last one has passed (bounded: each look that
            // fails means another request went).
            for _ in 0..<64 {
                let now = stopwatch.elapsed
                let extra = table.withLock { $0.hosts[host, default: HostPoliteness()].confirm(gap: gap, at: now) }
                guard extra > .zero else { break }
                try await clock.sleep(for: extra)
            }
        } catch {
            abandoned(host)  // cancelled while waiting: never sent
            throw error
        }
    }

    /// Notes a response head from `host`: a throttle (429, 503), what its rate-limit fields say, or a good answer.
    func answered(
        _ host: String, status: Int, reason phrase: String, retryAfter: Duration?, headers: RateLimitHeaders
    ) async {
        guard !host.isEmpty else { return }
        let now = stopwatch.elapsed
        let reason = "\(status) \(phrase)"
        let (connections, policyChanged, throttle) = table.withLock { table -> (Int, Bool, Bool) in
            let connections = table.inFlight[host, default: 1]
            table.inFlight[host] = max(0, connections - 1)
            // 429 is a throttle; 503 when it asks for a wait, says "slow down", or comes from a host that served
            // before (a host that never did is down, for ``HostOutages``, not busy).
            let throttle =
                status == 429
                || (status == 503
                    && (retryAfter != nil || phrase.lowercased().contains("slow") || table.answeredOnce.contains(host)))
            if status < 500 && status != 429 && status != 408 { table.answeredOnce.insert(host) }
            var state = table.hosts[host, default: HostPoliteness()]
            if !headers.isEmpty { state.learn(headers, at: now) }
            if throttle {
                state.throttled(reason, hold: retryAfter, connections: connections, at: now)
            } else if status < 500 {
                state.answered(maxConnections: maxConnections, at: now)
            }
            table.hosts[host] = state
            guard let rate = headers.policyRate, table.sharedPolicy[host] != rate else {
                return (connections, false, throttle)
            }
            table.sharedPolicy[host] = rate
            return (connections, true, throttle)
        }
        guard let shared else { return }
        if throttle || policyChanged || headers.exhausted { await countUncounted(host, in: shared) }
        if throttle {
            await shared.recordThrottle(host: host, reason: reason, hold: retryAfter, connections: connections)
        }
        if policyChanged || headers.exhausted {
            await shared.recordPolicy(
                host: host, rate: policyChanged ? headers.policyRate : nil,
                hold: headers.exhausted ? headers.reset : nil)
        }
    }

    /// Notes that a request to `host` got no answer; a reset (or a timeout) from a host that answered before is a
    /// throttle: it sheds load.
    func failed(_ host: String, underLoad: Bool) async {
        guard !host.isEmpty else { return }
        let now = stopwatch.elapsed
        let connections = table.withLock { table -> Int in
            let connections = table.inFlight[host, default: 1]
            table.inFlight[host] = max(0, connections - 1)
            if underLoad {
                table.hosts[host, default: HostPoliteness()].throttled(
                    "connection reset", hold: nil, connections: connections, at: now)
            }
            return connections
        }
        if underLoad, let shared {
            await countUncounted(host, in: shared)
            await shared.recordThrottle(host: host, reason: "connection reset", hold: nil, connections: connections)
        }
    }

    /// How often a worker looks up a host nothing limits in the fleet's schedule: every 100 ms in its first two
    /// seconds with the host (a policy or throttle another worker saw reaches this one before its burst grows), then
    /// once a second.
    static func fleetLookInterval(since first: Duration) -> Duration {
        first < .seconds(2) ? .milliseconds(100) : .seconds(1)
    }

    /// Counts in the fleet's schedule the requests to `host` sent since its last look there (before a throttle or a
    /// policy is recorded, which measure the rate from that count).
    private func countUncounted(_ host: String, in shared: any SharedHostBudget) async {
        let earlier = table.withLock { $0.uncounted.removeValue(forKey: host) ?? 0 }
        if earlier > 0 { await shared.countRequests(host: host, count: earlier) }
    }

    /// Counts in the fleet's schedule the requests sent since each host's last look (at shutdown, so that the fleet
    /// counts what this worker sent after its last look).
    func countAllUncounted() async {
        guard let shared else { return }
        for host in table.withLock({ $0.uncounted.keys.sorted() }) { await countUncounted(host, in: shared) }
    }

    /// The request was dropped before its answer (cancelled).
    func abandoned(_ host: String) {
        table.withLock { $0.inFlight[host] = max(0, ($0.inFlight[host] ?? 1) - 1) }
    }

    /// Whether `host` has answered a request before.
    func hasAnswered(_ host: String) -> Bool {
        table.withLock { $0.answeredOnce.contains(host) }
    }

    /// The connections backoff allows to `host` now, nil for no cap.
    func connectionCap(_ host: String) -> Int? {
        table.withLock { shared == nil ? $0.hosts[host]?.connectionCap : $0.sharedCaps[host] }
    }

    /// The state of every host this manager talked to.
    func statuses() -> [HostStatus] {
        let now = stopwatch.elapsed
        let wall = Date()
        return table.withLock { table in
            table.hosts.map { host, state in
                HostStatus(
                    host: host, requests: state.requests, policyRate: state.policyRate, backoffRate: state.backoffRate,
                    connectionCap: state.connectionCap,
                    heldForSeconds: state.holdUntil.flatMap { $0 > now ? ($0 - now).inSeconds : nil },
                    lastThrottle: state.lastThrottle.map { wall.addingTimeInterval(-(now - $0).inSeconds) },
                    reason: state.reason, throttles: state.throttles)
            }
            .sorted { $0.host < $1.host }
        }
    }
}
