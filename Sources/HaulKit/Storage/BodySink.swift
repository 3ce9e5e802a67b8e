import NIOCore

/// Where a response body's bytes go: the part file, or memory for a small file held whole until it is finished
/// (``HeldBody``).
protocol BodySink: Sendable {
    /// Writes all readable bytes of `buffer` at `offset`.
    func write(_ buffer: ByteBuffer, at offset: Int64) throws(DownloadError)
    /// Reads up to `count` bytes at `offset` into `buffer` (replacing its contents); returns how many were read.
    @discardableResult
    func read(into buffer: inout [UInt8], count: Int, at offset: Int64) throws(DownloadError) -> Int
    /// Whether a write waits on someone else's pace (a stream's consumer, which a pipe's reader may hold up): that
    /// time is not the server's, and the lowest-speed watch leaves it out.
    var waitsOnConsumer: Bool { get }
}

extension BodySink {
    var waitsOnConsumer: Bool { false }
}

extension PartFile: BodySink {}
