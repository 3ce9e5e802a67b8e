import Synchronization

/// How a download gives its slot to another host's download while it waits for its own host (a `Retry-After`, the
/// host's request budget), and takes one back before it sends. Waits of several connections of one download overlap:
/// the slot goes with the first and comes back after the last.
final class SlotYield: Sendable {
    /// Gives the slot away while `host` holds the download; returns whether it was given (false: it keeps it).
    let release: @Sendable (_ host: String, _ until: Duration) async -> Bool
    /// Returns once the download has a slot again.
    let reclaim: @Sendable () async -> Void
    private let state = Mutex<(waiting: Int, released: Bool)>((0, false))

    init(
        release: @escaping @Sendable (_ host: String, _ until: Duration) async -> Bool,
        reclaim: @escaping @Sendable () async -> Void
    ) {
        self.release = release
        self.reclaim = reclaim
    }

    /// Sleeps `wait` on `clock` without the slot (if it can be given), then takes one back.
    func away(for wait: Duration, host: String, clock: any Clock<Duration>) async throws {
        let first = state.withLock { state -> Bool in
            state.waiting += 1
            return state.waiting == 1 && !state.released
        }
        if first, await release(host, wait) { state.withLock { $0.released = true } }
        let slept: Result<Void, any Error>
        do {
            try await clock.sleep(for: wait)
            slept = .success(())
        } catch {
            slept = .failure(error)
        }
        let last = state.withLock { state -> Bool in
            state.waiting -= 1
            guard state.waiting == 0, state.released else { return false }
            state.released = false
            return true
        }
        if last { await reclaim() }
        try slept.get()
    }
}
