import Foundation
import NIOCore

/// Compares the first bytes of a response with what is already on disk before they are skipped.
///
/// Used on the first request after a resume: re-fetching a little before the resume point catches a torn tail and
/// a file that changed behind unchanged validators.
struct OverlapCheck {
    private var onDisk: [UInt8] = []
    private var checked = 0
    /// Bytes still to compare.
    private(set) var remaining: Int

    /// Reads the `count` bytes at `offset` that the response is expected to repeat.
    init(sink: any BodySink, offset: Int64, count: Int) throws(DownloadError) {
        remaining = count
        guard count > 0 else { return }
        guard try sink.read(into: &onDisk, count: count, at: offset) == count else {
            throw .internalError("the part file is shorter than recorded")
        }
    }

    /// Compares the start of `chunk` and moves past what was compared; returns the number of bytes compared, or
    /// nil when they differ from the disk.
    mutating func consume(_ chunk: inout ByteBuffer) -> Int? {
        let count = min(remaining, chunk.readableBytes)
        guard count > 0 else { return 0 }
        let offset = checked
        let same = chunk.withUnsafeReadableBytes { incoming in
            onDisk.withUnsafeBytes { memcmp(incoming.baseAddress!, $0.baseAddress! + offset, count) == 0 }
        }
        guard same else { return nil }
        chunk.moveReaderIndex(forwardBy: count)
        remaining -= count
        checked += count
        return count
    }
}
