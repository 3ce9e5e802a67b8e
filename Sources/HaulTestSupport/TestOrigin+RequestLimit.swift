import Foundation
import Synchronization

/// The origin's request-rate limiter and its record of when each request arrived: above ``perSecond`` requests in
/// the last second (a sliding window) a request is refused with 429 and `Retry-After` (or 503 SlowDown, as S3 and
/// Common Crawl do), as a rate-limited CDN or API would.
public final class TestOriginRequestLimit: Sendable {
    /// How a refusal is answered.
    public enum Refusal: Sendable {
        /// `429 Too Many Requests` with `Retry-After: retryAfter` (seconds).
        case tooManyRequests(retryAfter: Int)
        /// `503 Slow Down` with no `Retry-After`.
        case slowDown
    }

    private struct State {
        var perSecond: Int?
        var refusal = Refusal.tooManyRequests(retryAfter: 1)
        /// The requests let through in the last second.
        var window: [ContinuousClock.Instant] = []
        /// Every request's arrival and whether it was refused.
        var arrivals: [(at: ContinuousClock.Instant, refused: Bool)] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Refuses requests above `perSecond` in any second (nil: none refused), answering `refusal`.
    public func limit(_ perSecond: Int?, refusal: Refusal = .tooManyRequests(retryAfter: 1)) {
        state.withLock {
            $0.perSecond = perSecond
            $0.refusal = refusal
            $0.window = []
        }
    }

    /// Notes a request arriving now; returns the refusal's status and headers when it is over the limit.
    func admit() -> (status: Int, headers: [(String, String)])? {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard let perSecond = state.perSecond else {
                state.arrivals.append((now, false))
                return nil
            }
            state.window.removeAll { now - $0 >= .seconds(1) }
            guard state.window.count >= perSecond else {
                state.window.append(now)
                state.arrivals.append((now, false))
                return nil
            }
            state.arrivals.append((now, true))
            switch state.refusal {
            case .tooManyRequests(let retryAfter): return (429, [("Retry-After", String(retryAfter))])
            case .slowDown: return (503, [])
            }
        }
    }

    /// How many requests arrived, and how many were refused.
    public var counts: (arrived: Int, refused: Int) {
        state.withLock { ($0.arrivals.count, $0.arrivals.filter(\.refused).count) }
    }

    /// The most requests that arrived within any one second (a sliding window over every arrival).
    public var mostInAnySecond: Int {
        let times = state.withLock { $0.arrivals.map(\.at) }
        var most = 0
        var first = 0
        for (index, time) in times.enumerated() {
            while time - times[first] >= .seconds(1) { first += 1 }
            most = max(most, index - first + 1)
        }
        return most
    }

    /// Refused requests among those that arrived `after` the first arrival, and all of those.
    public func refused(after warmUp: Duration) -> (refused: Int, arrived: Int) {
        state.withLock { state in
            guard let start = state.arrivals.first?.at else { return (0, 0) }
            let later = state.arrivals.filter { $0.at - start >= warmUp }
            return (later.filter(\.refused).count, later.count)
        }
    }

    /// Requests let through per second between the first arrival and the last.
    public var servedPerSecond: Double {
        state.withLock { state in
            guard let first = state.arrivals.first?.at, let last = state.arrivals.last?.at, last > first else {
                return 0
            }
            let served = state.arrivals.filter { !$0.refused }.count
            let seconds =
                Double((last - first).components.seconds) + Double((last - first).components.attoseconds)
                / 1e18
            return Double(served - 1) / seconds
        }
    }
}
