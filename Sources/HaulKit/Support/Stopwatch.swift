/// Time since a start, read from any clock (the real one, or a mock clock in tests).
struct Stopwatch: Sendable {
    private enum Start: Sendable {
        /// The real clock's start, read directly: no closure to allocate (several stopwatches start per download).
        case continuous(ContinuousClock.Instant)
        /// Any other clock: reads the time since its start.
        case other(@Sendable () -> Duration)
    }

    private let start: Start

    /// Starts now on `clock`.
    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        if C.self == ContinuousClock.self {
            start = .continuous(ContinuousClock.now)
        } else {
            let start = clock.now
            self.start = .other { start.duration(to: clock.now) }
        }
    }

    /// Time since the start.
    var elapsed: Duration {
        switch start {
        case .continuous(let instant): instant.duration(to: ContinuousClock.now)
        case .other(let read): read()
        }
    }
}
