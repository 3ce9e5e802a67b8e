import Synchronization

/// How late this process's tasks wake while it runs: a task that only sleeps 10 ms at a time adds up how much later
/// than asked each sleep ends (the whole suite shares two cores, so a bound on a wait allows for as much).
public final class Lateness: Sendable {
    private final class Flag: Sendable { let done = Atomic<Bool>(false) }

    private let flag: Flag
    private let task: Task<Duration, Never>

    public init() {
        let flag = Flag()
        self.flag = flag
        task = Task {
            var late = Duration.zero
            while !flag.done.load(ordering: .relaxed) {
                let before = ContinuousClock.now
                try? await Task.sleep(for: .milliseconds(10))
                late += max(.zero, before.duration(to: .now) - .milliseconds(10))
            }
            return late
        }
    }

    /// Stops measuring; returns how late its sleeps ended, in all.
    public func stop() async -> Duration {
        flag.done.store(true, ordering: .relaxed)
        return await task.value
    }
}
