import Testing

@testable import HaulKit

/// The failure policy as a value: each decision in one line, no network, no clock.
@Suite("Retry budget")
struct RetryBudgetTests {
    private static func policy(attempts: Int = 10, seconds: Int64 = 90, restarts: Int = 5) -> RetryPolicy {
        var policy = RetryPolicy()
        policy.maxAttempts = attempts
        policy.maxTimeWithoutProgress = .seconds(seconds)
        policy.maxRestarts = restarts
        policy.jitter = 0
        return policy
    }

    private let transient = DownloadError.httpStatus(500, reason: "Internal Server Error", url: "u")

    @Test("backoff grows per attempt without progress")
    func backoffGrows() {
        var budget = RetryBudget(policy: Self.policy(), startingWith: 0, at: .zero)
        let result1 = budget.failed(transient, bytes: 0, at: .seconds(0), random: 0)
        #expect(result1 == .retry(after: .seconds(1), attempt: 1))
        let result2 = budget.failed(transient, bytes: 0, at: .seconds(1), random: 0)
        #expect(result2 == .retry(after: .seconds(2), attempt: 2))
        let result3 = budget.failed(transient, bytes: 0, at: .seconds(3), random: 0)
        #expect(result3 == .retry(after: .seconds(4), attempt: 3))
    }

    @Test("new bytes reset the count; bytes already had do not")
    func progressResets() {
        var budget = RetryBudget(policy: Self.policy(), startingWith: 100, at: .zero)
        _ = budget.failed(transient, bytes: 100, at: .seconds(1), random: 0)
        _ = budget.failed(transient, bytes: 100, at: .seconds(2), random: 0)
        #expect(budget.attemptsWithoutProgress == 2)
        let result4 = budget.failed(transient, bytes: 50, at: .seconds(3), random: 0)
        #expect(result4 == .retry(after: .seconds(4), attempt: 3))
        let result5 = budget.failed(transient, bytes: 101, at: .seconds(4), random: 0)
        #expect(result5 == .retry(after: .seconds(1), attempt: 1))
        #expect(budget.lastProgress == .seconds(4))
    }

    @Test("gives up after the attempts without progress")
    func attemptsBound() {
        var budget = RetryBudget(policy: Self.policy(attempts: 3), startingWith: 0, at: .zero)
        _ = budget.failed(transient, bytes: 0, at: .zero, random: 0)
        _ = budget.failed(transient, bytes: 0, at: .zero, random: 0)
        guard case .giveUp(let error) = budget.failed(transient, bytes: 0, at: .zero, random: 0) else {
            Issue.record("expected to give up")
            return
        }
        #expect(error.code == .serverError)
        #expect(error.summary.contains("gave up after 3 attempts"))
    }

    @Test("never sleeps past the time without progress, then gives up")
    func timeBound() {
        var budget = RetryBudget(policy: Self.policy(seconds: 10), startingWith: 0, at: .zero)
        let result6 = budget.failed(transient, bytes: 0, at: .seconds(1), random: 0)
        #expect(result6 == .retry(after: .seconds(1), attempt: 1))
        let result7 = budget.failed(transient, bytes: 0, at: .seconds(8), random: 0)
        #expect(result7 == .retry(after: .seconds(2), attempt: 2))
        // Four seconds would be due, two are left.
        let result8 = budget.failed(transient, bytes: 0, at: .seconds(8), random: 0)
        #expect(result8 == .retry(after: .seconds(2), attempt: 3))
        guard case .giveUp(let error) = budget.failed(transient, bytes: 0, at: .seconds(10), random: 0) else {
            Issue.record("expected to give up")
            return
        }
        #expect(error.summary.contains("no new data for 10 s"))
    }

    @Test("a Retry-After beyond the deadline gives up at once instead of hammering early")
    func retryAfterBeyondDeadline() {
        var budget = RetryBudget(policy: Self.policy(seconds: 60), startingWith: 0, at: .zero)
        let busy = DownloadError.httpStatus(503, reason: "Busy", url: "u", retryAfter: .seconds(3600))
        guard case .giveUp = budget.failed(busy, bytes: 0, at: .zero, random: 0) else {
            Issue.record("expected to give up")
            return
        }
        let soon = DownloadError.httpStatus(503, reason: "Busy", url: "u", retryAfter: .seconds(30))
        var other = RetryBudget(policy: Self.policy(seconds: 60), startingWith: 0, at: .zero)
        let result9 = other.failed(soon, bytes: 0, at: .zero, random: 0)
        #expect(result9 == .retry(after: .seconds(30), attempt: 1))
    }

    @Test("a final error ends at once")
    func finalError() {
        var budget = RetryBudget(policy: Self.policy(), startingWith: 0, at: .zero)
        let missing = DownloadError.httpStatus(404, reason: "Not Found", url: "u")
        let result10 = budget.failed(missing, bytes: 0, at: .zero, random: 0)
        #expect(result10 == .giveUp(missing))
    }

    @Test("restarts count as attempts and are capped as resourceUnstable")
    func restartsCapped() {
        var budget = RetryBudget(policy: Self.policy(restarts: 2), startingWith: 0, at: .zero)
        let changed = DownloadError.resourceChanged("ETag a became b")
        let result11 = budget.restarted(because: changed, bytes: 10, at: .zero, random: 0)
        #expect(result11 == .retry(after: .seconds(1), attempt: 1))
        // Re-fetched bytes below the furthest point are not progress.
        let result12 = budget.restarted(because: changed, bytes: 5, at: .zero, random: 0)
        #expect(result12 == .retry(after: .seconds(2), attempt: 2))
        guard case .giveUp(let error) = budget.restarted(because: changed, bytes: 10, at: .zero, random: 0) else {
            Issue.record("expected to give up")
            return
        }
        #expect(error.code == .resourceUnstable)
        #expect(error.summary.contains("3 restarts"))
    }
}
