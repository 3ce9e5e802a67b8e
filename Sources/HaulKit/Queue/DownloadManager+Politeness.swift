import Foundation

extension DownloadManager {
    /// The politeness state of every host: the fleet's with a shared queue, else this manager's (see
    /// `docs/politeness.md`).
    public func hosts() throws(DownloadError) -> [HostStatus] {
        if let shared = store.sharedHostBudget { return try shared.hostStatuses() }
        return session.pacer.statuses()
    }

    /// A job waits `wait` for `host` (a `Retry-After`, its request budget): its slot goes to the next queued download
    /// of another host meanwhile, and the host's queued downloads wait until the hold ends. Returns whether the slot
    /// was given (not when the job is being stopped, or as many jobs as allowed are off their slots already).
    func jobWaitsForHost(_ id: DownloadID, host: String, for wait: Duration) -> Bool {
        hold(host, for: wait)
        guard lifecycle.finishingStarted(id, holding: nil) else { return false }
        configuration.logger.debug(
            "waiting for the host without a slot",
            metadata: ["download": "\(id)", "host": "\(host)", "seconds": "\(wait.inSeconds)"])
        slotGivenBack(id)
        return true
    }

    /// Holds back `host`'s queued downloads for `wait` (bounded by ``HostPoliteness/longestHold``), then lets them
    /// start again.
    func hold(_ host: String, for wait: Duration) {
        guard !host.isEmpty else { return }
        holdGeneration += 1
        let generation = holdGeneration
        heldHosts[host] = generation
        let clock = configuration.clock
        let bounded = min(wait, HostPoliteness.longestHold)
        Task { [weak self] in
            try? await clock.sleep(for: bounded)
            await self?.holdEnded(host, generation: generation)
        }
    }

    private func holdEnded(_ host: String, generation: Int) {
        guard heldHosts[host] == generation else { return }  // held again since: the later hold ends it
        heldHosts[host] = nil
        lifecycle.releaseHeldBack(count: configuration.maxConcurrentDownloads)
        schedule()
    }
}
