import Logging
import Synchronization

/// The daemon's one budget of failed authentications (``FailureBudget``), shared by every connection, transport
/// and call: parallel connections, batches and `system.multicall` all draw from it. While it is empty a wrong token
/// is answered with ``RPCError/tooManyFailedAuthentications`` (HTTP 429) instead of `Unauthorized`; the right token
/// is always accepted, so an attacker cannot lock the owner out.
public final class FailureLimiter: Sendable {
    private let budget: Mutex<FailureBudget>
    /// Whether the last failure found the budget empty (to log the start of a run of refusals once).
    private let refusing = Mutex(false)
    private let logger: Logger

    /// `capacity` failures at once, refilling one every `interval`.
    public init(capacity: Int = 10, interval: Duration = .seconds(1), logger: Logger = Logger(label: "haul.serve")) {
        budget = Mutex(FailureBudget(capacity: capacity, interval: interval, now: .now))
        self.logger = logger
    }

    /// Counts one failed authentication: true to answer it `Unauthorized`, false to refuse it as too many.
    public func admit() -> Bool {
        let admitted = budget.withLock { $0.take(at: .now) }
        let startsRefusing = refusing.withLock { refusing in
            defer { refusing = !admitted }
            return !admitted && !refusing
        }
        if startsRefusing {
            logger.warning("too many failed authentications: refusing wrong tokens until the budget refills")
        }
        return admitted
    }
}
