import Synchronization

/// A thread-safe ``TokenBucket`` on a clock (the real one, or a mock clock in tests), shared by the tasks whose
/// bytes it limits.
final class RateLimiter: Sendable {
    private let bucket: Mutex<TokenBucket>
    private let stopwatch: Stopwatch

    init(bytesPerSecond: Int64?, clock: any Clock<Duration> = ContinuousClock()) {
        bucket = Mutex(TokenBucket(rate: bytesPerSecond))
        stopwatch = Stopwatch(clock)
    }

    /// Changes the limit; takes effect for the next bytes. `nil` removes it.
    func setLimit(_ bytesPerSecond: Int64?) {
        let now = self.now
        bucket.withLock { $0.setRate(bytesPerSecond, now: now) }
    }

    var limit: Int64? { bucket.withLock { $0.rate.map { Int64($0) } } }

    /// Accounts for `bytes` and returns how long to pause before reading more.
    func delay(for bytes: Int) -> Duration {
        let now = self.now
        let seconds = bucket.withLock { $0.take(bytes, now: now) }
        return seconds > 0 ? .microseconds(Int64(seconds * 1_000_000)) : .zero
    }

    private var now: Double { stopwatch.elapsed.inSeconds }
}
