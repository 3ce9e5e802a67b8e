import Synchronization

/// How a download gives its slot to another host's download while it waits for its own host (a `Retry-After`, the
/// host's request budget), and takes one back before it sends. Waits of several connections of one download overlap:
/// the slot goes with the first and comes back after the last.
final class SlotYield: Sendable {
    private let id: DownloadID
    private let lender: any SlotLender
    private let state = Mutex<(waiting: Int, released: Bool)>((0, false))

    /// The slot of download `id`, which `lender` gave it.
    init(of id: DownloadID, from lender: any SlotLender) {
        self.id = id
        self.lender = lender
    }

    /// Sleeps `wait` on `clock` without the slot (if it can be given), then takes one back.
    func away(for wait: Duration, host: String, clock: any Clock<Duration>) async throws {
        let first = state.withLock { state -> Bool in
            state.waiting += 1
            return state.waiting == 1 && !state.released
        }
        if first, await lender.hostWaitStarts(id, host: host, wait: wait) { state.withLock { $0.released = true } }
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
        if last { await lender.slotNeeded(id) }
        try slept.get()
    }
}

/// Who gives a download its slot (its job's owner), asked by ``SlotYield`` to lend it elsewhere and give it back.
protocol SlotLender: Sendable {
    /// Gives the slot of download `id` to another host's download while `host` makes it wait `wait` (a
    /// `Retry-After`, the host's request budget); returns whether it was given. ``slotNeeded(_:)`` takes one back.
    func hostWaitStarts(_ id: DownloadID, host: String, wait: Duration) async -> Bool

    /// Returns once download `id` has a slot again, before it connects after giving its slot away (its finishing
    /// failed, it waited for space or for its host).
    func slotNeeded(_ id: DownloadID) async
}
