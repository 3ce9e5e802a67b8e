import Testing

@testable import HaulKit

/// One host's schedule and backoff as a value: each decision in a line, no network, no clock.
@Suite("Host politeness")
struct HostPolitenessTests {
    @Test("without a gap, a policy or a throttle nothing waits")
    func free() {
        var host = HostPoliteness()
        for step in 0..<100 { #expect(host.reserve(gap: nil, at: .milliseconds(step)) == .zero) }
        #expect(host.requests == 100)
    }

    @Test("with a gap requests leave evenly spaced: no second holds more than the rate plus one")
    func spacing() {
        var host = HostPoliteness()
        var sendTimes: [Duration] = []
        // 40 requests asked for at once, then 10 more a second later.
        for _ in 0..<40 { sendTimes.append(host.reserve(gap: .milliseconds(100), at: .zero)) }
        for _ in 0..<10 { sendTimes.append(.seconds(1) + host.reserve(gap: .milliseconds(100), at: .seconds(1))) }
        #expect(sendTimes.first == .zero)
        #expect(sendTimes[39] == .milliseconds(3900))
        #expect(sendTimes.last == .milliseconds(4900))
        for (index, time) in sendTimes.enumerated() {
            let inSecond = sendTimes[index...].prefix { $0 - time < .seconds(1) }.count
            #expect(inSecond <= 10)
        }
    }

    @Test("a hold keeps every request back until it ends, then lets them out a gap apart")
    func hold() {
        var host = HostPoliteness()
        host.throttled("429 Too Many Requests", hold: .seconds(5), connections: 4, at: .seconds(10))
        let first = host.reserve(gap: nil, at: .seconds(11))
        let second = host.reserve(gap: nil, at: .seconds(11))
        #expect(first >= .seconds(4))
        #expect(second > first)  // not all at once
        #expect(host.throttles == 1)
        #expect(host.reason == "429 Too Many Requests")
    }

    @Test("a throttle halves the measured rate and the connections, once per second; good answers bring both back")
    func decreaseAndRecover() throws {
        var host = HostPoliteness()
        // 20 requests a second for two seconds.
        for step in 0..<40 { _ = host.reserve(gap: nil, at: .milliseconds(50 * step)) }
        host.throttled("503 Service Unavailable", hold: nil, connections: 8, at: .seconds(2))
        let cut = try #require(host.backoffRate)
        #expect(cut > 9 && cut < 11)
        #expect(host.connectionCap == 4)
        host.throttled("503 Service Unavailable", hold: nil, connections: 8, at: .milliseconds(2500))
        #expect(host.backoffRate == cut, "a second throttle within a second does not cut again")
        #expect(host.ownGap.map { $0 >= .milliseconds(90) } == true)
        host.throttled("503 Service Unavailable", hold: nil, connections: 4, at: .seconds(4))
        #expect(try #require(host.backoffRate) < cut)
        #expect(host.connectionCap == 2)
        // Additive increase: each good second adds 5% of the rate it was cut from.
        var time = Duration.seconds(4)
        var previous = try #require(host.backoffRate)
        for _ in 0..<5 {
            time += .seconds(1)
            host.answered(maxConnections: 8, at: time)
            let now = try #require(host.backoffRate)
            #expect(now > previous)
            previous = now
        }
        for _ in 0..<60 {
            time += .seconds(1)
            host.answered(maxConnections: 8, at: time)
        }
        #expect(host.backoffRate == nil, "lifted once twice the rate it was cut from")
        #expect(host.connectionCap == nil)
    }

    @Test("a policy learned after a burst counts the burst: the next request waits for its share of the window")
    func burstBeforePolicy() {
        var host = HostPoliteness()
        for _ in 0..<8 { #expect(host.reserve(gap: nil, at: .zero) == .zero) }
        host.learn(RateLimitHeaders(policyRate: 20), at: .milliseconds(10))
        let wait = host.reserve(gap: nil, at: .milliseconds(10))
        #expect(wait >= .milliseconds(420) && wait <= .milliseconds(450), "\(wait)")
    }

    @Test("under a known policy a throttle cuts by a fifth from the policy and recovers in policy-sized steps")
    func underPolicy() throws {
        var host = HostPoliteness()
        host.learn(RateLimitHeaders(policyRate: 20), at: .zero)
        for step in 0..<8 { _ = host.reserve(gap: nil, at: .milliseconds(step)) }  // a burst: 8 "per second"
        host.throttled("429 Too Many Requests", hold: .seconds(1), connections: 4, at: .milliseconds(10))
        #expect(host.backoffRate == 16)
        host.answered(maxConnections: 8, at: .seconds(2))
        #expect(try #require(host.backoffRate) >= 17.9)  // 5% of 20 a second, for 2 s
    }

    @Test("a backoff guessed before the policy was known gives way to the policy's cut")
    func policyAfterThrottle() {
        var host = HostPoliteness()
        host.throttled("429 Too Many Requests", hold: nil, connections: 4, at: .zero)
        #expect(host.backoffRate == 1)
        host.learn(RateLimitHeaders(policyRate: 20), at: .milliseconds(10))
        #expect(host.backoffRate == 16)
    }

    @Test("the rate is never cut below the floor")
    func floor() {
        var host = HostPoliteness()
        for step in 0..<20 {
            host.throttled("429 Too Many Requests", hold: nil, connections: 1, at: .seconds(2 * step))
        }
        #expect(host.backoffRate == HostPoliteness.lowestRate)
        #expect(host.connectionCap == 1)
    }

    @Test("a learned policy paces at its margin; a spent budget holds the host until its reset")
    func learned() {
        var host = HostPoliteness()
        host.learn(RateLimitHeaders(policyRate: 20), at: .zero)
        #expect(host.ownGap == .seconds(1 / (20 * HostPoliteness.policyMargin)))
        host.learn(RateLimitHeaders(remaining: 0, reset: .seconds(3)), at: .seconds(1))
        #expect(host.reserve(gap: nil, at: .seconds(1)) == .seconds(3))
    }
}
