import Foundation

/// A transfer's speed, fed with (time, bytes transferred so far) samples by its owner: the speed to show, and a
/// smoother one for the time left.
///
/// The speed shown is the bytes of the last ``window`` seconds over that span, and of every second since the first
/// sample while fewer have passed: the first tick after the first sample already shows the true rate, with no ramp
/// from 0, and the speed falls to 0 a window after bytes stop. The smoothed speed follows it with a time constant
/// (``smoothing``) and starts at its first value, so an estimate of the time left neither starts from nothing nor
/// jumps with every burst. Pure: no clock inside, so it is tested with plain numbers.
struct SpeedGauge: Sendable {
    /// The span, in seconds, the speed shown averages over.
    let window: Double
    /// How quickly the smoothed speed follows the shown one: after this many seconds a change counts for ~63%.
    let smoothing: Double
    /// Bytes per second over the last ``window`` (0 when idle).
    private(set) var bytesPerSecond: Double = 0
    /// ``bytesPerSecond`` smoothed over ``smoothing`` seconds; 0 until a first speed is known.
    private(set) var smoothedBytesPerSecond: Double = 0
    /// The samples of the last window, oldest first, with the newest one before it (where the window starts).
    private var samples: [(time: Double, bytes: Int64)] = []

    init(window: Double = 2, smoothing: Double = 3) {
        self.window = window
        self.smoothing = smoothing
        samples.reserveCapacity(16)
    }

    /// Records that `bytes` had been transferred in total at `time` seconds.
    mutating func record(bytes: Int64, at time: Double) {
        guard let last = samples.last else {
            samples.append((time, bytes))
            return
        }
        let elapsed = time - last.time
        guard elapsed > 0 else { return }
        samples.append((time, bytes))
        // Keep one sample at or before the window's start: the span measured never shrinks below the window.
        while samples.count > 2, samples[1].time <= time - window { samples.removeFirst() }
        let start = samples[0]
        let rate = Double(max(0, bytes - start.bytes)) / (time - start.time)
        bytesPerSecond = rate < 1 ? 0 : rate
        if smoothedBytesPerSecond == 0 {
            smoothedBytesPerSecond = bytesPerSecond
        } else {
            smoothedBytesPerSecond += (1 - exp(-elapsed / smoothing)) * (bytesPerSecond - smoothedBytesPerSecond)
            if smoothedBytesPerSecond < 1 { smoothedBytesPerSecond = 0 }
        }
    }

    /// Forgets the history (the next sample starts again).
    mutating func reset() {
        samples.removeAll(keepingCapacity: true)
        bytesPerSecond = 0
        smoothedBytesPerSecond = 0
    }
}
