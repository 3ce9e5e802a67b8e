/// Tells when one response has fallen to a trickle: fewer than `minimum` bytes per second over a whole `window`.
///
/// Pure: fed with byte counts and times by the receive loop. Time the loop spent pausing for a speed limit is
/// excluded, so Haul's own throttling never counts as a slow server.
struct LowSpeedWatch: Sendable, Equatable {
    /// Bytes per second below which the response is too slow.
    let minimum: Int64
    let window: Duration
    private var windowStart: Duration
    private var bytes: Int64 = 0

    init(minimum: Int64, window: Duration, start: Duration) {
        self.minimum = minimum
        self.window = window
        windowStart = start
    }

    /// Records `count` bytes received at `now`; true when the window just ended below the minimum.
    mutating func record(_ count: Int, at now: Duration) -> Bool {
        bytes += Int64(count)
        let elapsed = now - windowStart
        guard elapsed >= window else { return false }
        if Double(bytes) < Double(minimum) * elapsed.inSeconds { return true }
        windowStart = now
        bytes = 0
        return false
    }

    /// Leaves `pause` (spent waiting for a speed limit) out of the current window.
    mutating func exclude(_ pause: Duration) {
        windowStart += pause
    }
}
