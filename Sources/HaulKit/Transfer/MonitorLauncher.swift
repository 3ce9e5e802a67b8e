import Synchronization

/// Starts a job's ``JobMonitor`` only when there is something for it to do: once the job has run for a progress
/// interval, splits over several connections, or waits to retry. A small download ends before that and never pays
/// for a task, its timer and its cancellation (a tenth of the CPU of a 4 KiB download).
final class MonitorLauncher: Sendable {
    private let monitor: JobMonitor
    /// How long a job runs before its monitor starts: the monitor's own interval, so no tick is missed.
    let delay: Duration
    private let started = Atomic<Bool>(false)
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ monitor: JobMonitor, after delay: Duration) {
        self.monitor = monitor
        self.delay = delay
    }

    /// Starts the monitor if the job has run for ``delay`` (`elapsed` since it started).
    func startIfDue(elapsed: Duration) {
        if elapsed >= delay, !started.load(ordering: .relaxed) { start() }
    }

    /// Starts the monitor now, unless it was started (or stopped) already. Its first tick comes at once.
    func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let monitor = monitor
        task.withLock { $0 = Task(executorPreference: TaskPlacement.offLoop) { await monitor.run() } }
    }

    /// Takes a checkpoint now (see ``JobMonitor/checkpoint()``), whether or not the monitor runs.
    func checkpoint() async { await monitor.checkpoint() }

    /// Stops the monitor (if it ran) and waits for it; it never starts afterwards.
    func stop() async {
        started.store(true, ordering: .releasing)
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }
}
