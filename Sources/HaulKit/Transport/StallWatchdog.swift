import Synchronization

/// Ends a response body that brings no byte for the stall timeout while Haul waits for one.
///
/// It stands in for AsyncHTTPClient's read timeout, which ``HTTPTransport`` turns off for two reasons:
/// - That timeout runs while nobody reads the body. A download held back by a speed limit reads nothing while it
///   waits, so a low limit made healthy downloads fail as stalled, and each retry asked the server again.
/// - It is set again on every read: a timer, and about fifteen allocations, per part of every response.
///
/// Here one task ticks for every watched body, a quarter of the timeout apart, and counts only the time a body is
/// waited for (``Watch/waiting()``); a body quiet for the whole timeout (at most a quarter more) is cancelled and
/// ``watch(_:)`` throws ``DownloadError/stalled(seconds:)``. The ticking task runs only while a body is watched.
final class StallWatchdog: Sendable {
    /// How long a body may be waited for without a byte.
    let timeout: Duration
    private let tick: Duration
    private let state = Mutex(Registry())

    /// Ticks in a row without a byte before a body is cancelled: the first may come at once, so one more than the
    /// timeout holds.
    private static let quietTicksToFire = 5

    /// Whether its own task ticks; tests that drive it with ``tickOnce()`` turn that off.
    private let ticksByItself: Bool

    init(timeout: Duration, ticksByItself: Bool = true) {
        self.timeout = timeout
        self.ticksByItself = ticksByItself
        // Never a tight loop, whatever the timeout.
        tick = max(timeout / (Self.quietTicksToFire - 1), .milliseconds(10))
    }

    /// Whether the ticking task runs (it stops a tick after the last watch ends).
    var isTicking: Bool { state.withLock { $0.ticking } }

    /// A watched body's hand on its watch.
    struct Watch: Sendable {
        fileprivate let watchdog: StallWatchdog
        fileprivate let slot: Int

        /// The body is waited for: time without a byte counts from now.
        func waiting() { watchdog.state.withLock { $0.slots[slot].waiting(true) } }

        /// A part arrived, and Haul works on it (writes it, or waits for a speed limit): no time counts until the
        /// next ``waiting()``.
        func busy() { watchdog.state.withLock { $0.slots[slot].waiting(false) } }
    }

    /// Runs `operation` in a child task watched from its start, when it is counted as waiting.
    ///
    /// - Throws: ``DownloadError/stalled(seconds:)`` when the watchdog cancelled it; `CancellationError` when the
    ///   calling task was cancelled; otherwise what `operation` throws.
    func watch<T: Sendable>(_ operation: @Sendable (Watch) async throws -> T) async throws -> T {
        // A child task (an `async let`, made in this task's own memory) that the watchdog can cancel alone.
        async let watched = run(operation)
        do {
            return try await watched
        } catch is Fired {
            if Task.isCancelled { throw CancellationError() }
            throw DownloadError.stalled(seconds: Int(timeout.wholeSeconds))
        }
    }

    /// Runs `operation` registered, in the child task ``watch(_:)`` made.
    private func run<T: Sendable>(_ operation: @Sendable (Watch) async throws -> T) async throws -> T {
        let watch = Watch(watchdog: self, slot: register())
        let result: Result<T, any Error>
        do { result = .success(try await operation(watch)) } catch { result = .failure(error) }
        // Before the task ends: the watchdog cancels only tasks that are still registered.
        let fired = unregister(watch.slot)
        if fired, case .failure = result { throw Fired() }
        return try result.get()
    }

    /// ``watch(_:)`` for an operation that is not `Sendable`, such as one that calls a caller's consumer and updates
    /// the caller's variables. It runs in the child task while the calling task waits for that child, never both at
    /// once: lending it is safe, although the compiler cannot see it.
    func watchNonsendable(_ operation: (Watch) async throws -> Void) async throws {
        try await withoutActuallyEscaping(operation) { escapable in
            let lent = Lent(operation: escapable)
            try await self.watch { watch in try await lent.operation(watch) }
        }
    }

    private struct Lent: @unchecked Sendable {
        let operation: (Watch) async throws -> Void
    }

    /// The child failed after the watchdog cancelled it.
    private struct Fired: Error {}

    private func register() -> Int {
        let task = withUnsafeCurrentTask { CurrentTask(task: $0) }
        let (slot, startTicking) = state.withLock { registry in
            let slot = registry.add(Slot(task: task))
            defer { registry.ticking = true }
            return (slot, !registry.ticking)
        }
        if startTicking, ticksByItself { Task { await self.tickWhileWatching() } }
        return slot
    }

    /// Removes the watch; returns whether it fired.
    private func unregister(_ slot: Int) -> Bool {
        state.withLock { $0.remove(slot) }
    }

    /// Ticks until no body is watched.
    private func tickWhileWatching() async {
        while true {
            try? await Task.sleep(for: tick)
            if tickOnce().nothingWatched { return }
        }
    }

    /// One tick: cancels each body quiet for the timeout. Returns how many it cancelled, and whether nothing is
    /// watched any more (the ticking stops then).
    @discardableResult
    func tickOnce() -> (fired: Int, nothingWatched: Bool) {
        state.withLock { registry in
            var fired = 0
            for slot in registry.slots.indices where registry.slots[slot].ticked() { fired += 1 }
            if registry.watched == 0 { registry.ticking = false }
            return (fired, registry.watched == 0)
        }
    }

    /// How many bodies are watched now.
    var watchedCount: Int { state.withLock { $0.watched } }

    /// The watches, in slots that are reused (an array: a dictionary's in-place update allocates).
    private struct Registry {
        var slots: [Slot] = []
        var free: [Int] = []
        var watched = 0
        var ticking = false

        mutating func add(_ watch: Slot) -> Int {
            watched += 1
            if let slot = free.popLast() {
                slots[slot] = watch
                return slot
            }
            slots.append(watch)
            return slots.count - 1
        }

        /// Empties `slot`; returns whether its watch fired.
        mutating func remove(_ slot: Int) -> Bool {
            let fired = slots[slot].fired
            slots[slot] = Slot(task: nil)
            free.append(slot)
            watched -= 1
            return fired
        }
    }

    private struct Slot {
        /// nil in a free slot.
        let task: CurrentTask?
        var isWaiting = true
        var quietTicks = 0
        var fired = false

        init(task: CurrentTask?) { self.task = task }

        mutating func waiting(_ waiting: Bool) {
            isWaiting = waiting
            quietTicks = 0
        }

        /// Counts a tick; returns whether it cancelled the task now.
        mutating func ticked() -> Bool {
            guard let task, isWaiting, !fired else { return false }
            quietTicks += 1
            guard quietTicks >= StallWatchdog.quietTicksToFire else { return false }
            fired = true
            task.cancel()
            return true
        }
    }

    /// The watched child task, cancelled only under the registry's lock while it is registered: it unregisters
    /// under the same lock before it ends, so the task is alive whenever it is cancelled. (Cancelling runs the
    /// task's cancellation handlers at once: those of AsyncHTTPClient's body, which never call back here.)
    private struct CurrentTask: @unchecked Sendable {
        let task: UnsafeCurrentTask?
        func cancel() { task?.cancel() }
    }
}
