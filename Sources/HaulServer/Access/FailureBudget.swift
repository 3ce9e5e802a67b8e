/// How many failed authentications the daemon still answers as such: a token bucket of `capacity` failures that
/// refills one every `interval`. A value type with no clock of its own: each call says what time it is.
public struct FailureBudget: Sendable, Hashable {
    public let capacity: Int
    public let interval: Duration
    /// Failures that may still be answered `Unauthorized` now (fractions refill over time).
    private var available: Double
    private var updated: ContinuousClock.Instant

    public init(capacity: Int, interval: Duration, now: ContinuousClock.Instant) {
        self.capacity = max(1, capacity)
        self.interval = interval
        self.available = Double(self.capacity)
        self.updated = now
    }

    /// Takes one failure from the budget at `now`: true if there was one left, false if the budget is empty.
    public mutating func take(at now: ContinuousClock.Instant) -> Bool {
        refill(at: now)
        guard available >= 1 else { return false }
        available -= 1
        return true
    }

    /// Whether a failure at `now` would find the budget empty.
    public func isEmpty(at now: ContinuousClock.Instant) -> Bool {
        var copy = self
        copy.refill(at: now)
        return copy.available < 1
    }

    private mutating func refill(at now: ContinuousClock.Instant) {
        guard now > updated else { return }
        let elapsed = updated.duration(to: now)
        available = min(Double(capacity), available + elapsed / interval)
        updated = now
    }
}
