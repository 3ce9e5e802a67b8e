import Testing

@testable import HaulKit

@Suite("Token bucket")
struct TokenBucketTests {
    @Test("the token bucket holds the long-run rate and allows a short burst")
    func tokenBucket() {
        var bucket = TokenBucket(rate: 100_000)
        #expect(bucket.take(25_000, now: 0) == 0)  // the burst
        let wait = bucket.take(50_000, now: 0)
        #expect(abs(wait - 0.5) < 1e-9)
        #expect(bucket.take(10_000, now: 10) == 0)  // refilled, capped at the burst
        bucket.setRate(nil, now: 10)
        #expect(bucket.take(1 << 30, now: 10) == 0)
        var total = 0.0
        var limited = TokenBucket(rate: 1_000_000)
        var time = 0.0
        for _ in 0..<100 {
            let wait = limited.take(65_536, now: time)
            time += wait
            total += 65_536
        }
        #expect(total / time <= 1_000_000 * 1.05)
    }
}
