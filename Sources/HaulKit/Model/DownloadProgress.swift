/// How far a download has come, as reported in progress events and snapshots.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes on disk so far.
    public var receivedBytes: Int64
    /// The file's full size; `nil` while the server has not said.
    public var expectedBytes: Int64?
    /// Transfer speed in bytes per second over the last two seconds, from the first bytes on (0 when idle).
    public var bytesPerSecond: Double
    /// ``bytesPerSecond`` smoothed over a few seconds more: what ``estimatedTimeRemaining`` divides by, so the
    /// estimate does not jump with every burst.
    public var smoothedBytesPerSecond: Double
    /// Bytes received from the network since the download last started running (bytes fetched again to check a
    /// resume included): with the time it has run, the average speed of this run, which bytes from earlier runs do
    /// not inflate.
    public var transferredBytes: Int64
    /// Connections transferring right now.
    public var activeConnections: Int

    /// `receivedBytes / expectedBytes` in 0…1; `nil` when the size is unknown.
    public var fraction: Double? {
        guard let expectedBytes else { return nil }
        guard expectedBytes > 0 else { return 1 }
        return min(1, Double(receivedBytes) / Double(expectedBytes))
    }

    /// Time left at the smoothed speed; `nil` when the size is unknown or nothing is moving.
    public var estimatedTimeRemaining: Duration? {
        guard let expectedBytes, bytesPerSecond > 0 else { return nil }
        let rate = smoothedBytesPerSecond > 0 ? smoothedBytesPerSecond : bytesPerSecond
        let left = Double(max(0, expectedBytes - receivedBytes)) / rate
        return .milliseconds(Int64((left * 1000).rounded()))
    }

    /// `smoothedBytesPerSecond` defaults to `bytesPerSecond`.
    public init(
        receivedBytes: Int64, expectedBytes: Int64?, bytesPerSecond: Double = 0, smoothedBytesPerSecond: Double? = nil,
        transferredBytes: Int64 = 0, activeConnections: Int = 0
    ) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
        self.bytesPerSecond = bytesPerSecond
        self.smoothedBytesPerSecond = smoothedBytesPerSecond ?? bytesPerSecond
        self.transferredBytes = transferredBytes
        self.activeConnections = activeConnections
    }
}
