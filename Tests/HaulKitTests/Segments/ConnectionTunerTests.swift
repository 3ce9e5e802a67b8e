import Testing

@testable import HaulKit

/// `-x auto`'s decisions as a value: each in a line, no network, no clock.
@Suite("Connections chosen by measurement")
struct ConnectionTunerTests {
    private let mebibyte: Int64 = 1 << 20

    @Test("a server capping each connection: the count doubles while the speed follows, up to the maximum")
    func cappedServer() {
        var tuner = ConnectionTuner(maximum: 8, bytes: 0, at: .zero)
        #expect(
            tuner.measured(bytes: 1 * mebibyte, at: .seconds(1), allowed: 8)
                == .add(count: 2, reason: "1 connection gave 1.0 MiB/s: trying 2"))
        #expect(tuner.measured(bytes: 3 * mebibyte, at: .seconds(2), allowed: 8).isAdd(4))
        #expect(tuner.measured(bytes: 7 * mebibyte, at: .seconds(3), allowed: 8).isAdd(8))
        #expect(tuner.connections == 8)
        #expect(tuner.settled)
    }

    @Test("a fast edge: a second connection that adds nothing ends the search at two")
    func fastEdge() {
        var tuner = ConnectionTuner(maximum: 16, bytes: 0, at: .zero)
        #expect(tuner.measured(bytes: 100 * mebibyte, at: .seconds(1), allowed: 16).isAdd(2))
        // The new connection is given a second interval to start...
        #expect(tuner.measured(bytes: 210 * mebibyte, at: .seconds(2), allowed: 16) == .measure)
        // ...and a second one that does not pay either ends the search.
        guard case .settle(let reason) = tuner.measured(bytes: 320 * mebibyte, at: .seconds(3), allowed: 16) else {
            Issue.record("a 10% gain was followed by more connections")
            return
        }
        #expect(reason.contains("not a fifth more"))
        #expect(tuner.connections == 2)
        #expect(tuner.measured(bytes: 400 * mebibyte, at: .seconds(4), allowed: 16) == .settle(reason: "settled"))
    }

    @Test("the host allows fewer: it takes what is allowed, then settles when nothing more is")
    func hostAllowance() {
        var tuner = ConnectionTuner(maximum: 16, bytes: 0, at: .zero)
        #expect(tuner.measured(bytes: mebibyte, at: .seconds(1), allowed: 16).isAdd(2))
        #expect(tuner.measured(bytes: 3 * mebibyte, at: .seconds(2), allowed: 3).isAdd(3))
        guard case .settle(let reason) = tuner.measured(bytes: 6 * mebibyte, at: .seconds(3), allowed: 3) else {
            Issue.record("went beyond what the host allows")
            return
        }
        #expect(reason.contains("all the host allows"))
        #expect(tuner.connections == 3)
    }

    @Test("a measurement before the interval is up waits; a refused connection lowers the count and settles")
    func earlyAndDropped() {
        var tuner = ConnectionTuner(maximum: 4, bytes: 0, at: .zero)
        #expect(tuner.measured(bytes: mebibyte, at: .milliseconds(300), allowed: 4) == .measure)
        #expect(tuner.measured(bytes: mebibyte, at: .seconds(1), allowed: 4).isAdd(2))
        tuner.dropped()
        #expect(tuner.connections == 1)
        #expect(tuner.settled)
    }
}

extension ConnectionTuner.Decision {
    fileprivate func isAdd(_ count: Int) -> Bool {
        if case .add(let added, _) = self { return added == count }
        return false
    }
}
