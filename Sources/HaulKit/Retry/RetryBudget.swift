/// The failure policy of one run of a download, as a value: decides after each failure or restart whether to try
/// again, after how long, or to give up. Pure: the caller passes the bytes on disk and the time.
///
/// One budget is shared by every connection of a download, so bytes gained on any segment count as progress for
/// all of them. Progress is measured against the most bytes the download ever had in this run (``furthest``): a
/// server that cuts every response and cannot resume restarts from 0 each time and makes none.
struct RetryBudget: Sendable, Equatable {
    /// What to do after a failure.
    enum Decision: Sendable, Equatable {
        /// Try again after `delay` (already capped by the time left); `attempt` counts attempts without progress.
        case retry(after: Duration, attempt: Int)
        /// Stop: the download fails with this error.
        case giveUp(DownloadError)
    }

    let policy: RetryPolicy
    /// The most bytes on disk seen in this run.
    private(set) var furthest: Int64
    /// When the last new byte was seen (time since the run began).
    private(set) var lastProgress: Duration
    /// Attempts since the last new byte.
    private(set) var attemptsWithoutProgress = 0
    /// Restarts from byte 0 in this run.
    private(set) var restarts = 0
    /// Fresh URLs asked for since the last new byte.
    private(set) var refreshesWithoutProgress = 0

    init(policy: RetryPolicy, startingWith bytes: Int64, at now: Duration) {
        self.policy = policy
        furthest = bytes
        lastProgress = now
    }

    /// Notes the bytes on disk at `now`; more than ever before is progress.
    mutating func observe(bytes: Int64, at now: Duration) {
        guard bytes > furthest else { return }
        furthest = bytes
        lastProgress = now
        attemptsWithoutProgress = 0
        refreshesWithoutProgress = 0
    }

    /// Whether a fresh URL may be asked for after `error` (a refusal that means an expired URL: 401, 403 or 410):
    /// nil when it may, else the error that ends the download (``RetryPolicy/maxURLRefreshes`` asked in a row
    /// without progress, or the attempts spent).
    mutating func mayRefresh(after error: DownloadError, bytes: Int64, at now: Duration) -> DownloadError? {
        observe(bytes: bytes, at: now)
        if refreshesWithoutProgress >= policy.maxURLRefreshes {
            return DownloadError(
                code: error.code, summary: "\(error.summary) (gave up after \(policy.maxURLRefreshes) fresh URLs)",
                suggestion: error.suggestion, isTransient: false, httpStatus: error.httpStatus)
        }
        if attemptsWithoutProgress + 1 >= policy.maxAttempts {
            return error.givingUp(after: attemptsWithoutProgress + 1)
        }
        return nil
    }

    /// Counts a fresh URL that was given (an attempt without progress); returns the attempt number.
    mutating func refreshed() -> Int {
        refreshesWithoutProgress += 1
        attemptsWithoutProgress += 1
        return attemptsWithoutProgress
    }

    /// Decides what follows a failed attempt. `bytes` are on disk now; final errors end the download at once.
    mutating func failed(_ error: DownloadError, bytes: Int64, at now: Duration, random: Double) -> Decision {
        observe(bytes: bytes, at: now)
        guard error.isTransient else { return .giveUp(error) }
        return nextAttempt(after: error, at: now, random: random)
    }

    /// Decides what follows a restart from byte 0 (`error` says why, for the record). Every restart counts as an
    /// attempt without progress, and more than ``RetryPolicy/maxRestarts`` end the download as unstable.
    mutating func restarted(
        because error: DownloadError, bytes: Int64, at now: Duration, random: Double
    )
        -> Decision
    {
        observe(bytes: bytes, at: now)
        restarts += 1
        if restarts > policy.maxRestarts {
            return .giveUp(.resourceUnstable(restarts: restarts, lastReason: error.summary))
        }
        return nextAttempt(after: error, at: now, random: random)
    }

    /// Counts a restart whose new copy is already arriving (nothing to wait for): it uses up the budget like any
    /// restart, and returns the error that ends the download only when the restarts are spent; the attempt under way
    /// decides the rest.
    mutating func restartedWithNewCopy(because error: DownloadError, bytes: Int64, at now: Duration) -> DownloadError? {
        observe(bytes: bytes, at: now)
        restarts += 1
        attemptsWithoutProgress += 1
        guard restarts <= policy.maxRestarts else {
            return .resourceUnstable(restarts: restarts, lastReason: error.summary)
        }
        return nil
    }

    /// Time left before ``RetryPolicy/maxTimeWithoutProgress`` runs out.
    func timeLeft(at now: Duration) -> Duration {
        policy.maxTimeWithoutProgress - (now - lastProgress)
    }

    private mutating func nextAttempt(after error: DownloadError, at now: Duration, random: Double) -> Decision {
        attemptsWithoutProgress += 1
        if attemptsWithoutProgress >= policy.maxAttempts {
            return .giveUp(error.givingUp(after: attemptsWithoutProgress))
        }
        let left = timeLeft(at: now)
        guard left > .zero else {
            return .giveUp(error.givingUp(afterNoProgressFor: policy.maxTimeWithoutProgress))
        }
        if let asked = error.retryAfter, min(asked, policy.maxRetryAfter) > left {
            // Waiting less than the server asked would hammer it; waiting longer breaks the bound.
            return .giveUp(error.givingUp(afterNoProgressFor: policy.maxTimeWithoutProgress))
        }
        let delay = policy.delay(
            afterFailure: attemptsWithoutProgress, retryAfter: error.retryAfter, random: random)
        return .retry(after: min(delay, left), attempt: attemptsWithoutProgress)
    }
}
