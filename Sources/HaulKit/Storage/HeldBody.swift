import NIOCore
import Synchronization

/// The body of a small new file, held in memory until it is complete: the finishing group then records it, writes
/// it to its part file and moves it into place with the others, so a small download costs no commit and no file of
/// its own before it ends. One that does not complete is written out first (see `DownloadJob.spill`), as if it had
/// gone to its part file all along.
final class HeldBody: BodySink {
    private let bytes: Mutex<ByteBuffer>

    /// A body of up to `capacity` bytes.
    init(capacity: Int) {
        bytes = Mutex(ByteBufferAllocator().buffer(capacity: capacity))
    }

    /// The bytes held so far, from offset 0.
    var contents: ByteBuffer { bytes.withLock { $0 } }

    /// Appends `buffer`, which must start where the bytes held end (a body arrives in order).
    func write(_ buffer: ByteBuffer, at offset: Int64) throws(DownloadError) {
        try bytes.withLock { (held: inout ByteBuffer) throws(DownloadError) in
            guard offset == Int64(held.readableBytes) else {
                throw DownloadError.internalError(
                    "a held body was written at \(offset), after \(held.readableBytes) bytes")
            }
            var buffer = buffer
            held.writeBuffer(&buffer)
        }
    }

    @discardableResult
    func read(into buffer: inout [UInt8], count: Int, at offset: Int64) throws(DownloadError) -> Int {
        bytes.withLock { held in
            let available = max(0, min(count, held.readableBytes - Int(offset)))
            buffer = held.getBytes(at: held.readerIndex + Int(offset), length: available) ?? []
            return available
        }
    }
}
