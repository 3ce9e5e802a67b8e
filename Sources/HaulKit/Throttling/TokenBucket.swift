/// A token bucket that caps a byte rate; pure, fed with timestamps in seconds.
///
/// Tokens refill at `rate` bytes per second up to `burst`. Taking more tokens than there are goes into debt, and
/// the caller waits until the debt is repaid, so the long-run rate never exceeds `rate`.
struct TokenBucket: Sendable, Equatable {
    /// Bytes per second; nil means unlimited.
    private(set) var rate: Double?
    private var tokens: Double = 0
    private var updatedAt: Double?

    init(rate: Int64?) {
        self.rate = rate.map(Double.init)
    }

    /// Up to a quarter of a second of traffic may pass in one burst (at least 16 KiB).
    var burst: Double { max(16 * 1024, (rate ?? 0) / 4) }

    /// Changes the rate, keeping the tokens already earned (capped at the new burst).
    mutating func setRate(_ newRate: Int64?, now: Double) {
        refill(now: now)
        rate = newRate.map(Double.init)
        tokens = min(tokens, burst)
    }

    /// Takes `bytes` tokens at time `now` and returns how many seconds to wait before using them (0 for none).
    mutating func take(_ bytes: Int, now: Double) -> Double {
        guard let rate, rate > 0 else { return 0 }
        if updatedAt == nil {
            updatedAt = now
            tokens = burst
        }
        refill(now: now)
        tokens -= Double(bytes)
        return tokens >= 0 ? 0 : -tokens / rate
    }

    private mutating func refill(now: Double) {
        guard let rate, let updatedAt else {
            self.updatedAt = now
            return
        }
        tokens = min(burst, tokens + max(0, now - updatedAt) * rate)
        self.updatedAt = now
    }
}
