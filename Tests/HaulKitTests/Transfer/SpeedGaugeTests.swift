import Testing

@testable import HaulKit

@Suite("Speed gauge")
struct SpeedGaugeTests {
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
}
