import Foundation

/// How transient failures are retried: exponential backoff with jitter, honouring `Retry-After`, within bounds.
///
/// A download gives up on whichever bound it reaches first: ``maxAttempts`` attempts in a row without progress,
/// ``maxTimeWithoutProgress`` without a new byte, or ``maxRestarts`` restarts from byte 0 in one run. Progress means
/// bytes the download did not have before, on any of its connections; see `docs/resume-and-durability.md`.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in a row that made no progress before giving up (new bytes on any connection reset the count).
    /// Restarts and attempts that write nothing count too. Default 10.
    public var maxAttempts: Int = 10
    /// Longest time without a new byte before giving up; a backoff never sleeps past it. Default 10 minutes (the
    /// `haul get` command uses 90 s).
    public var maxTimeWithoutProgress: Duration = .seconds(600)
    /// Restarts from byte 0 in one run (changed resource, ignored range, range or content mismatch) before the
    /// download fails with ``DownloadError/Code/resourceUnstable``. Default 5.
    public var maxRestarts: Int = 5
    /// Delay before the first retry. Default 1 s.
    public var initialDelay: Duration = .seconds(1)
    /// Growth factor per failed attempt. Default 2.
    public var multiplier: Double = 2
    /// Longest delay between attempts. Default 60 s.
    public var maxDelay: Duration = .seconds(60)
    /// Share of each delay that is randomised (0 = none, 1 = full jitter). Default 0.5.
    public var jitter: Double = 0.5
    /// Longest `Retry-After` that is honoured; longer requests are waited for this long. Default 1 hour.
    public var maxRetryAfter: Duration = .seconds(3600)
    /// Fresh URLs asked of ``DownloadManager/Configuration/urlProvider`` in a row without a new byte before the
    /// download fails with the refusal that made it ask. Default 3.
    public var maxURLRefreshes: Int = 3
    /// Requests a host that has not answered yet (in this manager's life) gets when its name does not resolve or it
    /// refuses the connection, before its downloads fail at once with a final error: on a first contact that is a
    /// wrong URL or a server that is not running, not the outage the bounds above wait out. Nil (the default) treats
    /// them as any failure; `haul get` uses 3, so it fails in seconds (`--retry-connrefused` keeps it patient). Once
    /// the host has answered, its failures are retried within the bounds above.
    public var firstContactAttempts: Int?

    public init() {}

    /// The delay before retrying after the `failure`-th failure in a row (1-based).
    ///
    /// - Parameters:
    ///   - failure: how many attempts in a row failed, counting this one.
    ///   - retryAfter: what the server asked for, if anything; the delay is never shorter.
    ///   - random: a number in 0…1 that picks the jitter (pass `Double.random(in: 0...1)`).
    public func delay(afterFailure failure: Int, retryAfter: Duration?, random: Double) -> Duration {
        let exponent = Double(max(0, failure - 1))
        let base = min(maxDelay.inSeconds, initialDelay.inSeconds * pow(multiplier, exponent))
        let jitterShare = min(1, max(0, jitter))
        let jittered = base * (1 - jitterShare) + base * jitterShare * min(1, max(0, random))
        var delay = Duration.milliseconds(Int64((jittered * 1000).rounded()))
        if let retryAfter {
            delay = max(delay, min(retryAfter, maxRetryAfter))
        }
        return delay
    }
}
