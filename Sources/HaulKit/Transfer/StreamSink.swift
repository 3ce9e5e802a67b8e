import NIOCore

/// The ``BodySink`` of a stream (``StreamRun``): an in-order consumer instead of a part file.
///
/// Bytes at the next position go to the consumer, then into the digests being computed and a tail of the last ones,
/// which answers the ``BodyWriter``'s overlap check as a part file's disk would. Bytes before the next position (a
/// server that ignores ranges and resends the file from byte 0, or a decoded copy, which has no ranges) are compared
/// with the tail where it still holds them and skipped before it; a difference fails the stream, since the consumer
/// already has the first version. Bytes can never be written past the next position: a stream has no holes.
///
/// Written only by the stream's task, or the watched child task it waits for (``StallWatchdog/watch(_:)``), never
/// both at once: its state and the caller's consumer are lent to that child as ``StallWatchdog`` lends a
/// non-`Sendable` operation, which the compiler cannot see.
final class StreamSink: BodySink, @unchecked Sendable {
    /// Bytes handed to the consumer so far.
    private(set) var delivered: Int64 = 0
    /// The size the current response announces, passed to `progress`.
    var expected: Int64?
    /// The error the consumer threw, which ends the stream as it is (never retried: it is not the network's).
    private(set) var consumerFailure: (any Error)?

    private let consumer: (UnsafeRawBufferPointer) throws -> Void
    private let progress: @Sendable (_ delivered: Int64, _ expected: Int64?) -> Void
    /// The last delivered bytes, at least ``keep`` of them once that many were delivered (trimmed now and then).
    private var tail: [UInt8] = []
    private let keep: Int
    private var hashers: [DigestHasher] = []

    /// The consumer sets the pace while it takes the bytes (`haul get -o - | less`): not a slow server.
    var waitsOnConsumer: Bool { true }

    /// `keep`: how many delivered bytes a resume may compare (the engine's resume overlap).
    init(
        keep: Int, progress: @escaping @Sendable (_ delivered: Int64, _ expected: Int64?) -> Void,
        consumer: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) {
        self.keep = keep
        self.progress = progress
        self.consumer = consumer
    }

    /// Hashes the delivered bytes with `algorithm` too; false once bytes were delivered (a digest must see them all).
    @discardableResult
    func hash(with algorithm: DigestAlgorithm) -> Bool {
        guard delivered == 0 else { return false }
        if !hashers.contains(where: { $0.algorithm == algorithm }) { hashers.append(DigestHasher(algorithm)) }
        return true
    }

    /// The hex digest of every delivered byte, if ``hash(with:)`` asked for `algorithm` before the first one.
    func digest(_ algorithm: DigestAlgorithm) -> String? {
        hashers.first { $0.algorithm == algorithm }.map { $0.finalizeHex() }
    }

    func write(_ buffer: ByteBuffer, at offset: Int64) throws(DownloadError) {
        var buffer = buffer
        var position = offset
        guard position <= delivered else {
            throw .internalError("a stream was written at \(offset), after \(delivered) bytes: it has no holes")
        }
        if position < delivered {
            // Bytes resent from before the next position: skipped before the tail, compared where it holds them.
            let tailStart = delivered - Int64(tail.count)
            if position < tailStart {
                let count = Int(min(tailStart - position, Int64(buffer.readableBytes)))
                buffer.moveReaderIndex(forwardBy: count)
                position += Int64(count)
            }
            let count = Int(min(delivered - position, Int64(buffer.readableBytes)))
            if count > 0 {
                let from = Int(position - tailStart)
                let same = buffer.readableBytesView.prefix(count).elementsEqual(tail[from..<from + count])
                guard same else {
                    throw .resourceChanged(
                        "the bytes sent again differ from those already written, which cannot be taken back")
                }
                buffer.moveReaderIndex(forwardBy: count)
            }
        }
        let count = buffer.readableBytes
        guard count > 0 else { return }
        let failure: DownloadError? = buffer.withUnsafeReadableBytes { bytes in
            do {
                try consumer(bytes)
            } catch {
                consumerFailure = error
                return .internalError("the consumer stopped the stream: \(error)")
            }
            tail.append(contentsOf: bytes)
            for index in hashers.indices { hashers[index].update(bytes) }
            return nil
        }
        if let failure { throw failure }
        if tail.count > 2 * keep { tail.removeFirst(tail.count - keep) }
        delivered += Int64(count)
        progress(delivered, expected)
    }

    /// Reads delivered bytes the tail still holds: the overlap a resumed response is compared with.
    func read(into buffer: inout [UInt8], count: Int, at offset: Int64) throws(DownloadError) -> Int {
        let tailStart = delivered - Int64(tail.count)
        guard offset >= tailStart, offset + Int64(count) <= delivered else {
            throw .internalError("bytes \(offset)-\(offset + Int64(count)) of a stream are no longer kept")
        }
        let from = Int(offset - tailStart)
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: tail[from..<from + count])
        return count
    }
}
