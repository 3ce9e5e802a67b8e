import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Stopwatch")
struct StopwatchTests {
    @Test("on a mock clock, the time elapsed is what the clock moved since the start")
    func mockClock() {
        let clock = MockClock()
        clock.advance(by: .seconds(5))
        let stopwatch = Stopwatch(clock)
        #expect(stopwatch.elapsed == .zero)
        clock.advance(by: .milliseconds(1_500))
        #expect(stopwatch.elapsed == .milliseconds(1_500))
    }

    @Test("on the real clock, read without a closure, the time elapsed covers a sleep and no more than the caller saw")
    func continuousClock() async throws {
        let outer = ContinuousClock.now
        let stopwatch = Stopwatch(ContinuousClock())
        try await Task.sleep(for: .milliseconds(20))
        let elapsed = stopwatch.elapsed
        #expect(elapsed >= .milliseconds(20))
        #expect(elapsed <= outer.duration(to: .now))
    }

    @Test("the real clock reached as any clock is read the same way")
    func existentialClock() async throws {
        let clock: any Clock<Duration> = ContinuousClock()
        let outer = ContinuousClock.now
        let stopwatch = Stopwatch(clock)
        try await Task.sleep(for: .milliseconds(20))
        let elapsed = stopwatch.elapsed
        #expect(elapsed >= .milliseconds(20))
        #expect(elapsed <= outer.duration(to: .now))
    }
}
