import Logging
import Synchronization

/// The one retry component of a download run: a ``RetryBudget`` shared by all its connections, the waiting on the
/// configured clock, and the `retrying` events. Used by the one-connection loop and by every segment connection.
final class Retrier: Sendable {
    /// Why the next attempt waits.
    enum Setback: Sendable {
        /// An attempt failed (any error; it is mapped to a ``DownloadError``).
        case failure(any Error)
        /// The partial data was discarded and the download starts again from byte 0.
        case restart(RestartReason, detail: String)
    }

    /// How a wait ended.
    enum Verdict: Sendable {
        /// Attempt again.
        case again
        /// The budget is spent (or the error is final): `error` ends the download, unless another source takes over.
        case gaveUp(DownloadError)
    }

    /// The budget gave up (``Verdict/gaveUp(_:)``) while one of several connections waited: thrown by that
    /// connection so that the others stop, and returned by ``SegmentedTransfer/run(opening:)`` as its ending.
    struct GaveUp: Error {
        var error: DownloadError
    }

    private let budget: Mutex<RetryBudget>
    private let stopwatch: Stopwatch
    private let settings: EngineSettings
    private let events: any DownloadEventSink
    private let id: DownloadID
    private let target: RequestTarget?
    /// Gives the download's slot away during a long wait the host asked for (`Retry-After` on 429 or 503).
    private let slot: SlotYield?

    init(
        id: DownloadID, settings: EngineSettings, events: any DownloadEventSink, target: RequestTarget? = nil,
        slot: SlotYield? = nil, startingWith bytes: Int64
    ) {
        self.id = id
        self.slot = slot
        self.target = target
        self.settings = settings
        self.events = events
        stopwatch = Stopwatch(settings.clock)
        budget = Mutex(RetryBudget(policy: settings.retry, startingWith: bytes, at: .zero))
    }

    /// Notes the bytes on disk now (more than ever before is progress, from any connection).
    func observe(bytes: Int64) {
        let now = stopwatch.elapsed
        budget.withLock { $0.observe(bytes: bytes, at: now) }
    }

    /// Waits before the next attempt after `setback` and returns ``Verdict/again``, or returns at once the error that
    /// ends the download (throws only when the task is cancelled while waiting). `bytes` are on disk now. A refusal that
    /// means an expired URL (401, 403, 410) is answered with a fresh URL from the target, at once, when it has one;
    /// `generation` is the target's generation the failed request used.
    func wait(after setback: Setback, bytes: Int64, requestedWith generation: Int = 0) async throws -> Verdict {
        let now = stopwatch.elapsed
        let random = Double.random(in: 0...1)
        let error: DownloadError
        let decision: RetryBudget.Decision
        switch setback {
        case .failure(let failure):
            error = DownloadError.mapping(failure, stallTimeout: settings.stallTimeout)
            if let target, target.canRefresh, let status = error.httpStatus,
                RequestTarget.expiryStatuses.contains(status)
            {
                if let final = budget.withLock({ $0.mayRefresh(after: error, bytes: bytes, at: now) }) {
                    return .gaveUp(final)
                }
                switch await target.refresh(from: generation, status: status) {
                case .replaced:
                    let attempt = budget.withLock { $0.refreshed() }
                    settings.logger.info(
                        "the URL was refused; continuing with a fresh one",
                        metadata: ["download": "\(id)", "status": "\(status)"])
                    events.yield(id, .retrying(error, attempt: attempt, delay: .zero))
                    return .again
                case .replacedElsewhere:
                    return .again  // another connection already has a fresh URL: use it at once
                case .unavailable:
                    break
                }
            }
            decision = budget.withLock { $0.failed(error, bytes: bytes, at: now, random: random) }
        case .restart(let reason, let detail):
            error = DownloadError.restart(reason, detail: detail)
            decision = budget.withLock { $0.restarted(because: error, bytes: bytes, at: now, random: random) }
        }
        switch decision {
        case .giveUp(let final):
            settings.logger.debug("giving up", metadata: ["download": "\(id)", "error": "\(final)"])
            return .gaveUp(final)
        case .retry(let delay, let attempt):
            settings.logger.debug(
                "retrying", metadata: ["download": "\(id)", "attempt": "\(attempt)", "error": "\(error)"])
            events.yield(id, .retrying(error, attempt: attempt, delay: delay))
            if let slot, error.retryAfter != nil, delay >= HostPacer.slotYieldThreshold, let host = target?.host {
                // The host asked for the wait: another host's download uses the slot meanwhile.
                try await slot.away(for: delay, host: host, clock: settings.clock)
            } else {
                try await settings.clock.sleep(for: delay)
            }
            return .again
        }
    }

    /// Counts a restart whose new copy is already arriving (a `200` answering a range): no wait, but it uses up
    /// the budget like any restart. Throws the error that ends the download when the budget is spent.
    func countRestart(_ reason: RestartReason, detail: String, bytes: Int64) throws(DownloadError) {
        let now = stopwatch.elapsed
        let error = DownloadError.restart(reason, detail: detail)
        if let final = budget.withLock({ $0.restartedWithNewCopy(because: error, bytes: bytes, at: now) }) {
            throw final
        }
    }
}
