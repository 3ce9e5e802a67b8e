import NIOCore
import NIOPosix
import Testing

@testable import HaulKit

@Suite("Where tasks run")
struct TaskPlacementTests {
    /// Runs a task's jobs on one event loop, where every task runs once ``TaskPlacement/runTasksOnEventLoops()`` took
    /// effect (there through the runtime's global hook, as the generic executor; here as the task's executor
    /// preference, which a test can set without changing the whole process).
    final class LoopExecutor: TaskExecutor {
        let loop: any EventLoop
        init(_ loop: any EventLoop) { self.loop = loop }
        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    static var onALoop: Bool { MultiThreadedEventLoopGroup.currentEventLoop != nil }

    @Test(
        "work sent off the loop leaves it (to Swift's threads, or Dispatch's) and comes back after",
        arguments: [false, true])
    func offLoopLeavesTheLoop(dispatch: Bool) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let executor: any TaskExecutor = dispatch ? TaskPlacement.DispatchExecutor.shared : TaskPlacement.offLoop
        let (before, during, after) = await withTaskExecutorPreference(LoopExecutor(group.next())) {
            let before = Self.onALoop
            let during = await withTaskExecutorPreference(executor) {
                // Suspends and resumes, as a body being written does at every chunk.
                try? await Task.sleep(for: .milliseconds(5))
                return Self.onALoop
            }
            return (before, during, Self.onALoop)
        }
        #expect(before && !during && after)
        #expect(!TaskPlacement.tasksRunOnEventLoops, "this test process keeps Swift's own executor")
        try await group.shutdownGracefully()
    }
}
