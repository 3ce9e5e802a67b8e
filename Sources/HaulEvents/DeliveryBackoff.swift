import Foundation

/// When a failed delivery is tried again, and when it is given up: exponential, jittered, capped, and bounded by a
/// horizon from the event's time (a receiver down for hours still gets everything once it is back, within
/// ``maxDelay`` of its return).
package struct DeliveryBackoff: Sendable, Equatable {
    /// The wait after the first failure. Default 1 s.
    package var initialDelay: Duration = .seconds(1)
    /// The longest wait between two attempts. Default 5 minutes.
    package var maxDelay: Duration = .seconds(300)
    /// How long after the event it is still tried; then it is dropped, with an error in the log. Default 24 hours.
    package var horizon: Duration = .seconds(24 * 3600)

    package init() {}

    /// The wait after `attempts` failed attempts (1 or more): `initialDelay × 2^(attempts−1)`, at most
    /// ``maxDelay``, of which a random half (`jitter` in 0..<1) is taken away, so receivers that come back are not
    /// hit by every sender at once.
    package func delay(afterAttempts attempts: Int, jitter: Double) -> Duration {
        let exponent = Double(min(max(attempts, 1) - 1, 40))
        let base = min(maxDelay.seconds, initialDelay.seconds * pow(2, exponent))
        return .milliseconds(Int64((base * (1 - 0.5 * min(max(jitter, 0), 1))) * 1000))
    }

    /// Whether an event made at `created` is given up at `now`, rather than tried again at `next`.
    package func givesUp(created: Date, next: Date) -> Bool {
        next.timeIntervalSince(created) > horizon.seconds
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
