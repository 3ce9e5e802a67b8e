import Testing

@testable import HaulKit

/// The low-speed rule as a value: bytes and instants in, a verdict out.
@Suite("Lowest-speed watch")
struct LowSpeedWatchTests {
    @Test("a trickle below the minimum over the whole window is too slow")
    func trickle() {
        var watch = LowSpeedWatch(minimum: 1024, window: .seconds(30), start: .zero)
        for second in 1..<30 {
            let result13 = watch.record(128, at: .seconds(second))
            #expect(!result13)
        }
        let result14 = watch.record(128, at: .seconds(30))
        #expect(result14)
    }

    @Test("a fast window passes and starts a new one")
    func fastWindow() {
        var watch = LowSpeedWatch(minimum: 1024, window: .seconds(2), start: .zero)
        let result15 = watch.record(4096, at: .seconds(2))
        #expect(!result15)
        let result16 = watch.record(100, at: .seconds(3))
        #expect(!result16)
        let result17 = watch.record(100, at: .seconds(4))
        #expect(result17)
    }

    @Test("time spent pausing for a speed limit is not counted")
    func excludesPauses() {
        var watch = LowSpeedWatch(minimum: 1024, window: .seconds(2), start: .zero)
        watch.exclude(.seconds(10))
        let result18 = watch.record(100, at: .seconds(11))
        #expect(!result18)
        let result19 = watch.record(100, at: .seconds(12))
        #expect(result19)
    }
}
