import HaulConcurrencyHook
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes the event loops of NIO's singleton group Swift Concurrency's global executor, running each job there as
/// Swift's own threads do: isolated to nothing (the generic executor).
///
/// SwiftNIO's own takeover (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`)
/// runs each job isolated to its loop's serial executor. The runtime can then never continue a task inline when it
/// calls an actor or returns from one: every such hop queues the task on the loop again (26 jobs per small download
/// instead of 8, measured). Run as the generic executor, a hop to a free actor, and back, continues at once on the
/// same thread, as on Swift's threads.
///
/// Like NIO's, this installs `swift_task_enqueueGlobal_hook`, which the runtime reads for every job it makes global.
enum EventLoopTakeover {
    private typealias Enqueue = @convention(thin) (UnownedJob) -> Void
    /// The runtime's hook: the job, and the default enqueue it would call otherwise.
    private typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, Enqueue) -> Void

    /// Whether `UnownedSerialExecutor` has the layout known here: two words.
    private static let layoutKnown = MemoryLayout<UnownedSerialExecutor>.size == 2 * MemoryLayout<Int>.size

    /// The generic executor (`SerialExecutorRef::generic()`: no identity, no implementation word), which Swift passes
    /// when it runs a global job on its own threads. The standard library has no public way to name it. (Not kept
    /// in an optional: with no identity it is the optional's nil.)
    private static let generic = unsafeBitCast((Int(0), Int(0)), to: UnownedSerialExecutor.self)

    /// Installs the hook, once, before other code enqueues work on a large scale (from the main actor at start).
    /// Returns false, changing nothing, when the runtime has no such hook, another hook is installed, or the
    /// executor's layout is not the one known.
    static func install() -> Bool {
        guard layoutKnown, let symbol = hookAddress() else { return false }
        let slot = symbol.assumingMemoryBound(to: EnqueueGlobalHook?.self)
        guard slot.pointee == nil else { return false }
        slot.pointee = { job, _ in
            // Sticky: a job enqueued on a loop of the group stays on it (no thread switch).
            MultiThreadedEventLoopGroup.singleton.any().execute {
                job.runSynchronously(on: EventLoopTakeover.generic)
            }
        }
        return true
    }

    /// The runtime's hook: exported by a runtime linked as a shared library (`dlsym` finds it); in a binary built
    /// with `--static-swift-stdlib` (what tools/build-release ships), only the reference made at link time
    /// (HaulConcurrencyHook) reaches it, the symbol being kept out of the dynamic table.
    private static func hookAddress() -> UnsafeMutableRawPointer? {
        if let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "swift_task_enqueueGlobal_hook") {
            return symbol
        }
        return haul_enqueue_global_hook_slot().map { UnsafeMutableRawPointer($0) }
    }
}
