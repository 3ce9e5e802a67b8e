import Foundation

extension DownloadManager {
    /// The politeness state of every host: the fleet's with a shared queue, else this manager's (see
    /// `docs/politeness.md`).
    public func hosts() async throws(DownloadError) -> [HostStatus] {
        if let shared = store.sharedHostBudget { return try await shared.hostStatuses() }
        return session.pacer.statuses()
    }

    /// A job waits `wait` for `host` (a `Retry-After`, its request budget): its slot goes to the next queued download
    /// of another host meanwhile, and the host's queued downloads wait until the job takes a slot again (its wait is
    /// the host's). Returns whether the slot was given (not when the job is being stopped, or as many jobs as allowed
    /// are off their slots already).
    func jobWaitsForHost(_ id: DownloadID, host: String, for wait: Duration) async -> Bool {
        guard !host.isEmpty, lifecycle.finishingStarted(id, holding: nil) else { return false }
        configuration.logger.debug(
            "waiting for the host without a slot",
            metadata: ["download": "\(id)", "host": "\(host)", "seconds": "\(wait.inSeconds)"])
        heldHosts[host, default: []].insert(id)
        await slotGivenBack(id)
        return true
    }

    /// The job no longer waits for its host (it asks for a slot again, or it ended): the host's hold ends with the
    /// first of its jobs to come back, and its queued downloads may start again.
    /// Returns whether a hold ended.
    @discardableResult
    func hostWaitEnded(_ id: DownloadID) -> Bool {
        guard !heldHosts.isEmpty, let host = heldHosts.first(where: { $0.value.contains(id) })?.key else {
            return false
        }
        heldHosts[host] = nil
        releaseHeldBack(freeing: [])
        return true
    }

    /// How long a host found busy first waits before its downloads ask the store again (``retryBusyHostsSoon()``).
    static let busyHostRetry = Duration.milliseconds(100)

    /// The longest wait between two retries of a busy host: a second, or the tick when it is shorter. A queue held back
    /// by another worker goes on within this of its connections coming back, whatever the tick.
    var busyHostRetryCeiling: Duration { min(configuration.externalChangeInterval, .seconds(1)) }

    /// Asks again for the busy hosts' connections after a while, not only at the next tick: connections another
    /// worker gives back reach this one by no event. The wait is ``busyHostRetry``, then twice as long at each retry
    /// while a host stays busy, up to ``busyHostRetryCeiling``; a granted claim makes it short again. One retry is
    /// pending at a time, and a retry asks the store (never the host) once for all.
    func retryBusyHostsSoon() {
        guard !busyRetryPending else { return }
        busyRetryPending = true
        let delay = busyRetryDelay
        busyRetryDelay = min(delay * 2, busyHostRetryCeiling)
        Task { [clock = configuration.tickClock] in
            try? await clock.sleep(for: delay)
            busyRetryPending = false
            guard !busyHosts.isEmpty, !lifecycle.isShutDown else { return }
            releaseHeldBack(freeing: busyHosts)
            await schedule()
        }
    }
}
