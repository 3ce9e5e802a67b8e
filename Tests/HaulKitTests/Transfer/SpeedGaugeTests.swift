import Testing

@testable import HaulKit

@Suite("Speed gauge")
struct SpeedGaugeTests {
    /// Feeds `gauge` a steady `rate` from `start` seconds for `seconds`, one sample every quarter second, starting
    /// from `bytes` already transferred; returns the bytes at the end.
    @discardableResult
    static func feed(
        _ gauge: inout SpeedGauge, rate: Double, from start: Double, for seconds: Double, bytes: Int64 = 0
    ) -> Int64 {
        var total = bytes
        for step in 1...Int(seconds * 4) {
            total = bytes + Int64(rate * Double(step) * 0.25)
            gauge.record(bytes: total, at: start + Double(step) * 0.25)
        }
        return total
    }

    @Test("the speed gauge follows a steady rate and decays when idle")
    func speedGauge() {
        var gauge = SpeedGauge()
        for step in 0...40 { gauge.record(bytes: Int64(step) * 250_000, at: Double(step) * 0.25) }
        #expect(abs(gauge.bytesPerSecond - 1_000_000) < 1)
        for step in 41...80 { gauge.record(bytes: 40 * 250_000, at: Double(step) * 0.25) }
        #expect(gauge.bytesPerSecond < 10_000)
        gauge.reset()
        #expect(gauge.bytesPerSecond == 0)
    }

    /// A monitor starts a tick after its job (bytes already came) and samples every quarter second: the first speed
    /// it shows is the link's, not a ramp from 0 (a steady 4 MiB/s link showed 2.2 MiB/s for ~6 s; with `-j 4`, rows
    /// showed 281 KiB/s where each had ~1.1 MiB/s).
    @Test(
        "the first speed shown is the rate of the first bytes, with no ramp from 0",
        arguments: [4.0 * 1_048_576, 1.1 * 1_048_576, 20_000])
    func noRamp(rate: Double) {
        var gauge = SpeedGauge()
        gauge.record(bytes: 300_000, at: 0)
        gauge.record(bytes: 300_000 + Int64(rate / 4), at: 0.25)
        #expect(abs(gauge.bytesPerSecond - rate) < rate * 0.01, "after one tick: \(gauge.bytesPerSecond)")
        #expect(abs(gauge.smoothedBytesPerSecond - rate) < rate * 0.01)
        Self.feed(&gauge, rate: rate, from: 0.25, for: 6, bytes: 300_000 + Int64(rate / 4))
        #expect(abs(gauge.bytesPerSecond - rate) < rate * 0.01, "steady: \(gauge.bytesPerSecond)")
        #expect(abs(gauge.smoothedBytesPerSecond - rate) < rate * 0.01)
    }

    @Test("the speed shown averages over the window: bursts every other tick read as their average")
    func bursts() {
        var gauge = SpeedGauge()
        var bytes: Int64 = 0
        gauge.record(bytes: 0, at: 0)
        for step in 1...40 {
            // 2 MiB every half second, nothing in between: 4 MiB/s.
            if step % 2 == 0 { bytes += 2 << 20 }
            gauge.record(bytes: bytes, at: Double(step) * 0.25)
            if step >= 8 {
                #expect(abs(gauge.bytesPerSecond - 4 * 1_048_576) < 0.15 * 4 * 1_048_576, "step \(step)")
            }
        }
    }

    @Test("the smoothed speed, which the time left divides by, follows a change more slowly than the speed shown")
    func smoothedForTimeLeft() {
        var gauge = SpeedGauge()
        gauge.record(bytes: 0, at: 0)
        let bytes = Self.feed(&gauge, rate: 4_000_000, from: 0, for: 10)
        // The link halves: the speed shown follows within its window, the smoothed one only part of the way.
        Self.feed(&gauge, rate: 2_000_000, from: 10, for: 2, bytes: bytes)
        #expect(abs(gauge.bytesPerSecond - 2_000_000) < 20_000)
        #expect(gauge.smoothedBytesPerSecond > 2_800_000 && gauge.smoothedBytesPerSecond < 3_800_000)
        let progress = DownloadProgress(
            receivedBytes: 0, expectedBytes: 30_000_000, bytesPerSecond: gauge.bytesPerSecond,
            smoothedBytesPerSecond: gauge.smoothedBytesPerSecond)
        let left = Double(progress.estimatedTimeRemaining?.components.seconds ?? 0)
        #expect(abs(left - 30_000_000 / gauge.smoothedBytesPerSecond) < 1)
        // Idle: the speed falls to 0 a window later, and with it the estimate.
        for step in 1...9 { gauge.record(bytes: bytes + 4_000_000, at: 12 + Double(step) * 0.25) }
        #expect(gauge.bytesPerSecond == 0)
        let idle = DownloadProgress(
            receivedBytes: 0, expectedBytes: 30_000_000, bytesPerSecond: gauge.bytesPerSecond,
            smoothedBytesPerSecond: gauge.smoothedBytesPerSecond)
        #expect(idle.estimatedTimeRemaining == nil)
    }
}
