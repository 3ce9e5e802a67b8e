import HaulTestSupport
import Synchronization
import Testing

@testable import HaulKit

/// How a worker uses the fleet's host schedule (``SharedHostBudget``) for a host nothing limits: a look now and then,
/// not a round trip per request, and every request counted there.
@Suite("A worker's looks in the fleet's host schedule", .timeLimit(.minutes(1)))
struct FleetLookTests {
    /// A fleet's schedule that answers at once and notes what it was asked, in order.
    final class RecordingBudget: SharedHostBudget {
        private let state = Mutex((calls: [String](), limited: false))
        var calls: [String] { state.withLock { $0.calls } }
        var reservations: Int { calls.count { $0 == "reserve" } }
        func limit(_ limited: Bool) { state.withLock { $0.limited = limited } }

        func reserveRequest(
            host: String, gap: Duration?, maxConnections: Int
        ) async -> (
            wait: Duration, connectionCap: Int?, limited: Bool
        )? {
            state.withLock {
                $0.calls.append("reserve")
                return (.zero, nil, $0.limited)
            }
        }
        func countRequests(host: String, count: Int) async { state.withLock { $0.calls.append("count \(count)") } }
        func recordThrottle(host: String, reason: String, hold: Duration?, connections: Int) async {
            state.withLock { $0.calls.append("throttle") }
        }
        func recordPolicy(host: String, rate: Double?, hold: Duration?) async {
            state.withLock { $0.calls.append("policy") }
        }
        func hostStatuses() async throws(DownloadError) -> [HostStatus] { [] }
    }

    @Test("a host nothing limits is looked up every 100 ms in its first two seconds, then once a second; all counted")
    func looksNowAndThen() async throws {
        let clock = MockClock()
        let budget = RecordingBudget()
        let pacer = HostPacer(pacing: nil, maxConnections: 8, shared: budget, clock: clock)
        func send(_ count: Int) async throws {
            for _ in 0..<count { try await pacer.pace("h.example", pacing: nil, slot: nil) }
        }
        try await send(51)
        #expect(budget.calls == ["reserve"], "the first request looks; the 50 after it go without a round trip")
        clock.advance(by: .milliseconds(100))
        try await send(1)
        #expect(budget.calls.suffix(2) == ["count 50", "reserve"], "\(budget.calls)")
        clock.advance(by: .milliseconds(50))
        try await send(10)
        #expect(budget.reservations == 2)
        clock.advance(by: .seconds(2))
        try await send(1)
        #expect(budget.calls.suffix(2) == ["count 10", "reserve"], "\(budget.calls)")
        // Past its first two seconds: once a second.
        clock.advance(by: .milliseconds(500))
        try await send(5)
        #expect(budget.reservations == 3)
        clock.advance(by: .milliseconds(500))
        try await send(1)
        #expect(budget.calls.suffix(2) == ["count 5", "reserve"], "\(budget.calls)")
        // A throttle is recorded after the requests not yet counted, from which the fleet measures the rate.
        try await send(3)
        await pacer.answered(
            "h.example", status: 429, reason: "Too Many Requests", retryAfter: nil, headers: RateLimitHeaders())
        #expect(budget.calls.suffix(2) == ["count 3", "throttle"], "\(budget.calls)")
    }

    @Test("a policy learned is recorded after the requests not yet counted: it counts them against itself")
    func policyAfterCount() async throws {
        let budget = RecordingBudget()
        let pacer = HostPacer(pacing: nil, maxConnections: 8, shared: budget, clock: MockClock())
        for _ in 0..<4 { try await pacer.pace("h.example", pacing: nil, slot: nil) }
        await pacer.answered(
            "h.example", status: 200, reason: "OK", retryAfter: nil, headers: RateLimitHeaders(policyRate: 10))
        #expect(budget.calls == ["reserve", "count 3", "policy"])
    }

    @Test("the requests sent since each host's last look are counted when the worker ends, each host once")
    func countedAtTheEnd() async throws {
        let budget = RecordingBudget()
        let pacer = HostPacer(pacing: nil, maxConnections: 8, shared: budget, clock: MockClock())
        for _ in 0..<4 { try await pacer.pace("a.example", pacing: nil, slot: nil) }
        for _ in 0..<2 { try await pacer.pace("b.example", pacing: nil, slot: nil) }
        await pacer.countAllUncounted()
        #expect(budget.calls == ["reserve", "reserve", "count 3", "count 1"])
        await pacer.countAllUncounted()
        #expect(budget.calls.count == 4, "nothing counted twice")
    }

    @Test("a host the fleet says something limits is looked up for every request")
    func limitedHostLooksEachTime() async throws {
        let clock = MockClock()
        let budget = RecordingBudget()
        budget.limit(true)
        let pacer = HostPacer(pacing: nil, maxConnections: 8, shared: budget, clock: clock)
        for _ in 0..<5 { try await pacer.pace("h.example", pacing: nil, slot: nil) }
        #expect(budget.calls == Array(repeating: "reserve", count: 5))
        // Once the fleet says nothing limits it, the looks thin out again.
        budget.limit(false)
        clock.advance(by: .milliseconds(100))
        for _ in 0..<5 { try await pacer.pace("h.example", pacing: nil, slot: nil) }
        #expect(budget.reservations == 6)
    }
}
