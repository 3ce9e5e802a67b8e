/// How far a download has come, as reported in progress events and snapshots.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes on disk so far.
    public var receivedBytes: Int64
    /// The file's full size; `nil` while the server has not said.
    public var expectedBytes: Int64?
    /// Smoothed transfer speed in bytes per second (0 when idle).
    public var bytesPerSecond: Double
    /// Connections transferring right now.
    public var activeConnections: Int

    /// `receivedBytes / expectedBytes` in 0…1; `nil` when the size is unknown.
    public var fraction: Double? {
        guard let expectedBytes else { return nil }
        guard expectedBytes > 0 else { return 1 }
        return min(1, Double(receivedBytes) / Double(expectedBytes))
    }

    /// Time left at the current speed; `nil` when the size is unknown or nothing is moving.
    public var estimatedTimeRemaining: Duration? {
        guard let expectedBytes, bytesPerSecond > 0 else { return nil }
        let left = Double(max(0, expectedBytes - receivedBytes)) / bytesPerSecond
        return .milliseconds(Int64((left * 1000).rounded()))
    }

    public init(receivedBytes: Int64, expectedBytes: Int64?, bytesPerSecond: Double = 0, activeConnections: Int = 0) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
        self.bytesPerSecond = bytesPerSecond
        self.activeConnections = activeConnections
    }
}
