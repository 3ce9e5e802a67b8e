import Synchronization

/// The ``HostOutages`` of one manager, shared by all its requests and timed on its retry clock.
///
/// While no host is down (the usual case) each call costs one atomic load: no lock and no work on the URL.
final class HostGate: Sendable {
    private let outages: Mutex<HostOutages>
    /// How many hosts ``outages`` holds.
    private let count = Atomic(0)
    private let stopwatch: Stopwatch
    /// Whether answers must be noted even while no host is down (``RetryPolicy/firstContactAttempts``).
    private let notesEveryAnswer: Bool

    init(policy: RetryPolicy, clock: any Clock<Duration>) {
        outages = Mutex(
            HostOutages(
                limit: policy.maxTimeWithoutProgress, probeInterval: policy.maxDelay,
                firstContactAttempts: policy.firstContactAttempts))
        notesEveryAnswer = policy.firstContactAttempts != nil
        stopwatch = Stopwatch(clock)
    }

    /// Whether no host is known to be down.
    var isClear: Bool { count.load(ordering: .relaxed) == 0 }

    /// Decides whether a request may go to `route`.
    func admit(_ route: String) -> HostOutages.Admission {
        if isClear { return .send }
        let now = stopwatch.elapsed
        return update { $0.admit(route, at: now) }
    }

    /// Notes that a request to `route` failed; returns the final error that ends its download at once, if the host
    /// could never be reached (see ``HostOutages/failed(_:with:unreachable:at:)``).
    @discardableResult
    func failed(_ route: String, with error: DownloadError, unreachable: Bool = false) -> DownloadError? {
        let now = stopwatch.elapsed
        return update { $0.failed(route, with: error, unreachable: unreachable, at: now) }
    }

    /// Whether an answer from `route` must be noted (some host is down, or first contacts are counted).
    var notesAnswers: Bool { notesEveryAnswer || !isClear }

    /// Notes that `route` answered, or sent bytes.
    func answered(_ route: String) {
        if !notesAnswers { return }
        update { $0.answered(route) }
    }

    /// Notes that a probe of `route` ended.
    func probeEnded(_ route: String) {
        update { $0.probeEnded(route) }
    }

    private func update<Result>(_ body: (inout HostOutages) -> Result) -> Result {
        outages.withLock { table in
            let result = body(&table)
            count.store(table.outages.count, ordering: .relaxed)
            return result
        }
    }
}
