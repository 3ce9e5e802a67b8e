/// `-x auto`: how many connections a download uses, chosen by measurement. Pure: fed with the bytes received and the
/// time, it answers what to do.
///
/// It starts with one connection and doubles them once per ``interval`` while the speed with the new count is at least
/// ``margin`` above the speed before (judged on a second interval when the first does not show it) (one connection behind a fast edge stays at one or two; a server that caps each
/// connection gets many), never beyond ``maximum`` or what the host allows now (its share, its backoff). Once a doubling
/// does not pay, or nothing more is allowed, it settles: it never adds again in this run. A connection the server
/// refuses drops out on its own (``SegmentedTransfer``), and the count goes down with it.
struct ConnectionTuner: Sendable, Equatable {
    /// What to do after a measurement.
    enum Decision: Sendable, Equatable {
        /// Measure again after another interval.
        case measure
        /// Open connections up to `count` in all.
        case add(count: Int, reason: String)
        /// Stop adding for good.
        case settle(reason: String)
    }

    /// The least gain a doubling must bring to be followed by another.
    static let margin = 0.2
    /// How long each count is measured.
    static let interval: Duration = .seconds(1)

    let maximum: Int
    private(set) var connections: Int
    private(set) var settled = false
    /// The speed measured with the previous count (bytes per second).
    private var previousSpeed: Double?
    /// Whether the current count already had one interval that did not pay: new connections take a moment to start
    /// (a connection, a first byte), so a count is judged on its second interval before it is given up on.
    private var rechecking = false
    private var lastBytes: Int64
    private var lastTime: Duration

    init(maximum: Int, connections: Int = 1, bytes: Int64, at now: Duration) {
        self.maximum = max(1, maximum)
        self.connections = max(1, min(connections, self.maximum))
        lastBytes = bytes
        lastTime = now
        settled = self.connections >= self.maximum
    }

    /// A measurement: `bytes` received in all at `now`; `allowed` is how many connections the host allows now.
    mutating func measured(bytes: Int64, at now: Duration, allowed: Int) -> Decision {
        guard !settled else { return .settle(reason: "settled") }
        let seconds = (now - lastTime).inSeconds
        guard seconds >= Self.interval.inSeconds * 0.9 else { return .measure }
        let speed = Double(bytes - lastBytes) / seconds
        lastBytes = bytes
        lastTime = now
        let text = "\(connections) connection\(connections == 1 ? "" : "s") gave \(Self.rate(speed))"
        if let previous = previousSpeed, speed < previous * (1 + Self.margin) {
            if !rechecking {
                rechecking = true
                return .measure
            }
            settled = true
            return .settle(reason: "\(text), not a fifth more than the \(Self.rate(previous)) of fewer: keeping them")
        }
        let target = min(connections * 2, maximum, max(1, allowed))
        guard target > connections else {
            settled = true
            let why = connections >= maximum ? "the most allowed" : "all the host allows now"
            return .settle(reason: "\(text); \(connections) is \(why)")
        }
        previousSpeed = speed
        rechecking = false
        connections = target
        settled = target >= maximum
        return .add(count: target, reason: "\(text): trying \(target)")
    }

    /// A connection dropped out (the server refused it): one fewer.
    mutating func dropped() {
        connections = max(1, connections - 1)
        settled = true
    }

    private static func rate(_ bytesPerSecond: Double) -> String {
        bytesPerSecond >= 1_048_576
            ? "\((bytesPerSecond / 1_048_576 * 10).rounded() / 10) MiB/s"
            : "\(Int((bytesPerSecond / 1024).rounded())) KiB/s"
    }
}
