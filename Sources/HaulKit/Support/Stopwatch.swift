/// Time since a start, read from any clock (the real one, or a mock clock in tests).
struct Stopwatch: Sendable {
    private let read: @Sendable () -> Duration

    /// Starts now on `clock`.
    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        read = { start.duration(to: clock.now) }
    }

    /// Time since the start.
    var elapsed: Duration { read() }
}
