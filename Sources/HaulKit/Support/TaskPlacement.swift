import Dispatch
import Synchronization

/// Where Haul's tasks run.
///
/// By default, on Swift's cooperative threads, while AsyncHTTPClient's I/O runs on its own event loops: every request
/// then crosses between the two four to six times (submitting it, its deadline and the deadline's cancellation, the
/// response, AsyncHTTPClient's cancellation handler), each a thread wake-up. A program that downloads many small
/// files can run its tasks on the event loops instead (``runTasksOnEventLoops()``); long or blocking work (a body
/// streamed to its file, checksums, a caller's URL provider) then leaves the loops, so they keep reading.
public enum TaskPlacement {
    private static let onEventLoops = Atomic<Bool>(false)

    /// Makes AsyncHTTPClient's event loops (NIO's singleton group) Swift Concurrency's global executor, for the whole
    /// process. Jobs run there as on Swift's own threads, so a task that calls a free actor, or returns from one,
    /// goes on at once on the same thread. Returns whether it took effect.
    ///
    /// Call it once, from the main actor, before downloading. Everything the program runs as tasks then runs on
    /// those loops, so the program must not block in tasks for long. Every store (the embedded SQLite database and
    /// HaulFleet's PostgreSQL queue alike) is awaited and never blocks the thread that awaits it.
    @MainActor
    @discardableResult
    public static func runTasksOnEventLoops() -> Bool {
        guard !onEventLoops.load(ordering: .acquiring) else { return true }
        guard EventLoopTakeover.install() else { return false }
        onEventLoops.store(true, ordering: .releasing)
        return true
    }

    /// Whether ``runTasksOnEventLoops()`` took effect.
    public static var tasksRunOnEventLoops: Bool { onEventLoops.load(ordering: .acquiring) }

    /// The executor for long or blocking work: Dispatch's threads when tasks run on event loops, else Swift's
    /// global executor (where it ran anyway).
    static var offLoop: any TaskExecutor {
        tasksRunOnEventLoops ? DispatchExecutor.shared : globalConcurrentExecutor
    }

    /// Runs jobs on Dispatch's global concurrent queue.
    final class DispatchExecutor: TaskExecutor {
        static let shared = DispatchExecutor()

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }
}
