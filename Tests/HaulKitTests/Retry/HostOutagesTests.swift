import Testing

@testable import HaulKit

/// Hosts that refuse every connection, as a value: each decision in one line, no network, no clock.
@Suite("Host outages")
struct HostOutagesTests {
    private let refused = DownloadError.networkFailure("could not connect to a:80 (connection refused)")

    /// A table whose hosts fail at once after 90 s down, probed at most once a minute.
    private func table() -> HostOutages { HostOutages(limit: .seconds(90), probeInterval: .seconds(60)) }

    private func isRefused(_ admission: HostOutages.Admission) -> Bool {
        if case .refuse = admission { return true }
        return false
    }

    @Test("a host not known to be down is sent to; failures within the limit change nothing")
    func withinLimit() {
        var outages = table()
        #expect(outages.admit("a:80", at: .zero) == .send)
        outages.failed("a:80", with: refused, at: .seconds(1))
        outages.failed("a:80", with: refused, at: .seconds(50))
        #expect(outages.admit("a:80", at: .seconds(90)) == .send)  // down for 89 s
        #expect(outages.admit("b:80", at: .seconds(91)) == .send)
        #expect(outages.outages["a:80"]?.failures == 2)
    }

    @Test("after the limit one probe goes through and the rest fail at once, with what happened")
    func probeThenRefuse() throws {
        var outages = table()
        outages.failed("a:80", with: refused, at: .seconds(0))
        outages.failed("a:80", with: refused, at: .seconds(80))
        #expect(outages.admit("a:80", at: .seconds(90)) == .probe)
        guard case .refuse(let error) = outages.admit("a:80", at: .seconds(91)) else {
            Issue.record("a second request during the probe was let through")
            return
        }
        #expect(error.code == .hostDown)
        #expect(!error.isTransient)
        #expect(error.summary.contains("every request to a:80 failed for 91 s (2 attempts, the last with"))
        #expect(error.summary.contains("connection refused"))
        // Another host is not affected.
        #expect(outages.admit("b:80", at: .seconds(91)) == .send)
    }

    @Test("a failed probe is followed by the next only after the probe interval")
    func probeInterval() {
        var outages = table()
        outages.failed("a:80", with: refused, at: .seconds(0))
        #expect(outages.admit("a:80", at: .seconds(90)) == .probe)
        outages.failed("a:80", with: refused, at: .seconds(91))
        #expect(isRefused(outages.admit("a:80", at: .seconds(92))))
        #expect(isRefused(outages.admit("a:80", at: .seconds(149))))
        #expect(outages.admit("a:80", at: .seconds(150)) == .probe)
        #expect(outages.outages["a:80"]?.failures == 2)
    }

    @Test("a probe that ends without connecting (cancelled) frees the slot for the next interval")
    func probeEndedWithoutAnswer() {
        var outages = table()
        outages.failed("a:80", with: refused, at: .seconds(0))
        outages.failed("a:80", with: refused, at: .seconds(80))
        #expect(outages.admit("a:80", at: .seconds(90)) == .probe)
        outages.probeEnded("a:80")
        #expect(isRefused(outages.admit("a:80", at: .seconds(100))))
        #expect(outages.admit("a:80", at: .seconds(150)) == .probe)
    }

    @Test("any answer ends the outage")
    func answerEndsOutage() {
        var outages = table()
        outages.failed("a:80", with: refused, at: .seconds(0))
        #expect(outages.admit("a:80", at: .seconds(90)) == .probe)
        outages.answered("a:80")
        #expect(outages.outages.isEmpty)
        #expect(outages.admit("a:80", at: .seconds(91)) == .send)
        // A new outage is timed from its own first failure.
        outages.failed("a:80", with: refused, at: .seconds(100))
        #expect(outages.admit("a:80", at: .seconds(189)) == .send)
        #expect(outages.admit("a:80", at: .seconds(190)) == .probe)
    }

    @Test("evidence older than the limit is forgotten: a download that comes much later gets its own tries")
    func staleOutageForgotten() {
        var outages = table()
        outages.failed("a:80", with: refused, at: .seconds(0))
        outages.failed("a:80", with: refused, at: .seconds(50))
        #expect(outages.admit("a:80", at: .seconds(100)) == .probe)
        outages.failed("a:80", with: refused, at: .seconds(101))
        #expect(isRefused(outages.admit("a:80", at: .seconds(120))))
        #expect(outages.admit("a:80", at: .seconds(192)) == .send)  // no failure since 101: 91 s ago
        #expect(outages.outages.isEmpty)
        // A probe interval longer than the bound keeps the evidence until the next probe is due.
        var slow = HostOutages(limit: .seconds(30), probeInterval: .seconds(60))
        slow.failed("a:80", with: refused, at: .seconds(0))
        #expect(slow.admit("a:80", at: .seconds(30)) == .probe)
        slow.failed("a:80", with: refused, at: .seconds(31))
        #expect(isRefused(slow.admit("a:80", at: .seconds(80))))
        #expect(slow.admit("a:80", at: .seconds(90)) == .probe)
    }
}

/// The first-contact rule (`RetryPolicy.firstContactAttempts`): a host that never answered and cannot be reached at
/// all fails its downloads at once; one that answered once, or failed otherwise, is waited for.
@Suite("Host outages: first contact")
struct FirstContactTests {
    private let refused = DownloadError.networkFailure("could not connect to a:80 (connection refused)")
    private let reset = DownloadError.networkFailure("connection reset by peer")

    private func table() -> HostOutages {
        HostOutages(limit: .seconds(90), probeInterval: .seconds(60), firstContactAttempts: 3)
    }

    @Test("three unreachable attempts to a host that never answered: a final error, for its other downloads too")
    func unreachable() throws {
        var outages = table()
        #expect(outages.failed("a:80", with: refused, unreachable: true, at: .zero) == nil)
        #expect(outages.failed("a:80", with: refused, unreachable: true, at: .seconds(1)) == nil)
        // #require expands a method call into a closure over an immutable copy: the mutating call is made first.
        let third = outages.failed("a:80", with: refused, unreachable: true, at: .seconds(2))
        let final = try #require(third)
        #expect(final.code == .networkFailure && !final.isTransient)
        #expect(final.suggestion.contains("--retry-connrefused"))
        guard case .refuse(let error) = outages.admit("a:80", at: .seconds(3)) else {
            Issue.record("another download of the host was let through")
            return
        }
        #expect(error == final)
        #expect(outages.admit("b:80", at: .seconds(3)) == .send)
    }

    @Test("a host that answered once, or failed otherwise than unreachable, is retried as before")
    func patient() {
        var answered = table()
        answered.answered("a:80")
        for second in 0..<5 {
            #expect(answered.failed("a:80", with: refused, unreachable: true, at: .seconds(second)) == nil)
        }
        var mixed = table()
        #expect(mixed.failed("a:80", with: reset, at: .zero) == nil)
        for second in 1..<5 {
            #expect(mixed.failed("a:80", with: refused, unreachable: true, at: .seconds(second)) == nil)
        }
        var off = HostOutages(limit: .seconds(90), probeInterval: .seconds(60))
        for second in 0..<5 {
            #expect(off.failed("a:80", with: refused, unreachable: true, at: .seconds(second)) == nil)
        }
    }
}
