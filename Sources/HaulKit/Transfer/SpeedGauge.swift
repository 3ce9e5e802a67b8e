import Foundation

/// A smoothed transfer speed, fed with (time, bytes transferred so far) samples by its owner.
///
/// Exponentially weighted with a time constant, so it reacts within a couple of seconds and decays to 0 when
/// nothing moves. Pure: no clock inside, so it is tested with plain numbers.
struct SpeedGauge: Sendable {
    /// How quickly old samples fade: after this long a change counts for ~63%.
    var timeConstant: Double = 2
    private(set) var bytesPerSecond: Double = 0
    private var last: (time: Double, bytes: Int64)?

    init(timeConstant: Double = 2) { self.timeConstant = timeConstant }

    /// Records that `bytes` had been transferred in total at `time` seconds.
    mutating func record(bytes: Int64, at time: Double) {
        guard let previous = last else {
            last = (time, bytes)
            return
        }
        let elapsed = time - previous.time
        guard elapsed > 0 else { return }
        let rate = Double(max(0, bytes - previous.bytes)) / elapsed
        let weight = 1 - exp(-elapsed / timeConstant)
        bytesPerSecond =
            bytesPerSecond == 0 && previous.bytes == 0 ? rate : bytesPerSecond + weight * (rate - bytesPerSecond)
        if bytesPerSecond < 1 { bytesPerSecond = 0 }
        last = (time, bytes)
    }

    /// Forgets the history (the next sample starts again).
    mutating func reset() {
        last = nil
        bytesPerSecond = 0
    }
}
