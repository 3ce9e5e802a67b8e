import NIOCore
import Synchronization

/// The body of a small new file, held in memory until it is complete: the finishing group then records it, writes
/// it to its part file and moves it into place with the others, so a small download costs no commit and no file of
/// its own before it ends. One that does not complete is written out first (see `DownloadJob.spill`), as if it had
/// gone to its part file all along.
///
/// The buffers the body arrived in are kept as they are, not copied into one (a copy was 4% of the work for files of
/// 64 KiB), unless a buffer's storage is much larger than its bytes: then those bytes are copied, so what is held
/// never keeps much more memory than it counts.
final class HeldBody: BodySink {
    private struct Held {
        var chunks: [ByteBuffer] = []
        var count = 0
    }

    private let held = Mutex(Held())

    /// The most storage a kept buffer may have beyond its bytes: a quarter of them, or 4 KiB.
    static func keepsAsIs(_ buffer: ByteBuffer) -> Bool {
        buffer.storageCapacity - buffer.readableBytes <= max(buffer.readableBytes / 4, 4096)
    }

    /// The bytes held so far, from offset 0, in order.
    var chunks: [ByteBuffer] { held.withLock { $0.chunks } }

    /// How many bytes are held.
    var count: Int { held.withLock { $0.count } }

    /// Appends `buffer`, which must start where the bytes held end (a body arrives in order).
    func write(_ buffer: ByteBuffer, at offset: Int64) throws(DownloadError) {
        guard buffer.readableBytes > 0 else { return }
        var kept = buffer
        if !Self.keepsAsIs(buffer) {
            kept = ByteBufferAllocator().buffer(capacity: buffer.readableBytes)
            kept.writeImmutableBuffer(buffer)
        }
        try held.withLock { (held: inout Held) throws(DownloadError) in
            guard offset == Int64(held.count) else {
                throw DownloadError.internalError("a held body was written at \(offset), after \(held.count) bytes")
            }
            held.chunks.append(kept)
            held.count += kept.readableBytes
        }
    }

    @discardableResult
    func read(into buffer: inout [UInt8], count: Int, at offset: Int64) throws(DownloadError) -> Int {
        buffer.removeAll(keepingCapacity: true)
        held.withLock { held in
            var skip = max(0, Int(offset))
            for chunk in held.chunks where buffer.count < count {
                if skip >= chunk.readableBytes {
                    skip -= chunk.readableBytes
                    continue
                }
                let view = chunk.readableBytesView.dropFirst(skip)
                buffer.append(contentsOf: view.prefix(count - buffer.count))
                skip = 0
            }
        }
        return buffer.count
    }
}
