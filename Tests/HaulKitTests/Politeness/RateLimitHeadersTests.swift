import Testing

@testable import HaulKit

/// `RateLimit-Policy`, `RateLimit` (both drafts' forms) and `X-RateLimit-*`.
@Suite("Rate-limit header fields")
struct RateLimitHeadersTests {
    private func parse(_ fields: [String: String], now: Double = 1_700_000_000) -> RateLimitHeaders {
        RateLimitHeaders({ fields[$0] }, nowSeconds: now)
    }

    @Test(
        "a policy's quota per window, either draft; the strictest of several",
        arguments: [
            ("\"default\";q=100;w=10", 10.0), ("20;w=1", 20.0), ("100;w=60, 10;w=1", 1.0 + 2.0 / 3.0),
            ("\"burst\";q=50;w=1, \"day\";q=86400;w=86400", 1.0), ("7", 7.0),
        ])
    func policy(_ field: String, _ rate: Double) throws {
        let parsed = try #require(parse(["ratelimit-policy": field]).policyRate)
        #expect(abs(parsed - rate) < 0.001)
    }

    @Test("a malformed policy is ignored", arguments: ["", "q=;;", "\"x\";w=0", "abc def"])
    func malformedPolicy(_ field: String) {
        #expect(parse(["ratelimit-policy": field]).policyRate == nil)
    }

    @Test("RateLimit: the remaining requests and the reset, in draft 08's list and the earlier dictionary")
    func budget() {
        let new = parse(["ratelimit": "\"default\";r=0;t=3"])
        #expect(new.remaining == 0)
        #expect(new.reset == .seconds(3))
        #expect(new.exhausted)
        let old = parse(["ratelimit": "limit=100, remaining=50, reset=30"])
        #expect(old.remaining == 50)
        #expect(old.reset == .seconds(30))
        #expect(!old.exhausted)
    }

    @Test("X-RateLimit: seconds to wait, or a Unix time")
    func xRateLimit() {
        let seconds = parse(["x-ratelimit-remaining": "0", "x-ratelimit-reset": "12"])
        #expect(seconds.exhausted)
        #expect(seconds.reset == .seconds(12))
        let epoch = parse(["x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000005"], now: 1_700_000_000)
        #expect(epoch.reset == .seconds(5))
        #expect(parse([:]).isEmpty)
    }
}
