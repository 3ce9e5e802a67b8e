/// One download's run as a value: after each attempt, failure and wait, which step comes next.
///
/// ```
/// attempt ──completed──────────────────────────────▶ finish ──▶ (done)
///    │                                                  └──rejected (checksum failed with mirrors' bytes)──▶ wait
///    │ ├───wrote bytes, the body ended early───────▶ attempt
///    │ ├───brought nothing, failed, restart from 0──▶ wait ──▶ attempt
///    │ ├───budget spent, or a final error──────────▶ failed
///    │ └───no room (below the floor, ENOSPC)───────▶ waitForSpace ──room again──▶ attempt
///    └─────cancelled (pause, remove, shutdown)─────▶ stopped
/// ```
///
/// An attempt is one request on one connection, or, once the file is split, a run of every connection of the plan
/// (``SegmentedTransfer``), whose failures go through the same ``Retrier``: one retry component and one body writer
/// for both paths. Whether a failure is worth retrying is ``DownloadError/isTransient`` alone, decided in the wait.
/// Events that do not apply to the current step (any event after `failed` or `stopped`) change nothing.
struct TransferMachine: Sendable {
    /// How one attempt ended, when it did not throw.
    enum AttemptResult: Sendable, Equatable {
        case completed
        /// The body ended cleanly before the end of the file (a server that sends shorter ranges, or a bounded
        /// range of a file whose size is unknown); `wrote` says whether it brought any byte.
        case incomplete(wrote: Bool)
        /// The partial data was discarded; fetch again from byte 0.
        case refetch(RestartReason, detail: String)
    }

    enum Step: Sendable {
        /// Send a request (or run the plan's connections); the first of a resumed run compares an overlap.
        case attempt(verifyingOverlap: Bool)
        /// Wait through the retry budget before the next attempt (or give up).
        case wait(Retrier.Setback)
        /// Wait, without a slot, until the file system has room (``FreeSpacePolicy``): `reason` is the error that
        /// said there was none (a write's `ENOSPC`, or the floor).
        case waitForSpace(DownloadError)
        /// Verify, sync and move the complete file into place.
        case finish
        case failed(DownloadError)
        case stopped

        var isFinal: Bool {
            switch self {
            case .failed, .stopped: true
            case .attempt, .wait, .waitForSpace, .finish: false
            }
        }
    }

    private(set) var step: Step

    /// Starts with an attempt; `resuming` when bytes are already on disk (its overlap is compared).
    init(resuming: Bool) {
        step = .attempt(verifyingOverlap: resuming)
    }

    /// An attempt ended without an error; `missing` is how many bytes are still to come (for the message).
    mutating func attemptEnded(_ result: AttemptResult, missing: Int64) {
        guard case .attempt = step else { return }
        switch result {
        case .completed:
            step = .finish
        case .incomplete(wrote: true):
            step = .attempt(verifyingOverlap: false)
        case .incomplete(wrote: false):
            // An answer that brought nothing waits like a failure: no server is asked again in a tight loop.
            step = .wait(.failure(DownloadError.responseTruncated(received: 0, expected: missing)))
        case .refetch(let reason, let detail):
            step = .wait(.restart(reason, detail: detail))
        }
    }

    /// Finishing found the complete file unusable (a checksum that failed with a mirror's bytes in it): the partial
    /// data was discarded; fetch it again after a wait.
    mutating func finishRejected(_ reason: RestartReason, detail: String) {
        guard case .finish = step else { return }
        step = .wait(.restart(reason, detail: detail))
    }

    /// An attempt, or finishing, threw `error`; `cancelled` when the task was cancelled. A file system with no room
    /// (``DownloadError/Code/diskFull``) is waited out, not retried.
    mutating func failed(_ error: any Error, cancelled: Bool) {
        guard !step.isFinal, !isWaiting else { return }
        if !cancelled, let failure = error as? DownloadError, failure.code == .diskFull {
            step = .waitForSpace(failure)
            return
        }
        step = cancelled ? .stopped : .wait(.failure(error))
    }

    /// Before an attempt (or when a retry budget gave up on it) the file system had no room: wait for it.
    mutating func spaceRanOut(_ reason: DownloadError) {
        guard !step.isFinal else { return }
        step = .waitForSpace(reason)
    }

    /// The file system has room again: attempt again.
    mutating func spaceFound() {
        guard case .waitForSpace = step else { return }
        step = .attempt(verifyingOverlap: false)
    }

    /// The wait is over: attempt again.
    mutating func waited() {
        guard isWaiting else { return }
        step = .attempt(verifyingOverlap: false)
    }

    /// The retry budget is spent (or the error is final): the run fails with `error`.
    mutating func gaveUp(_ error: DownloadError) {
        guard !step.isFinal else { return }
        step = .failed(error)
    }

    /// The task was cancelled: the run stops, its partial data kept.
    mutating func cancelled() {
        guard !step.isFinal else { return }
        step = .stopped
    }

    private var isWaiting: Bool {
        if case .wait = step { true } else { false }
    }
}
