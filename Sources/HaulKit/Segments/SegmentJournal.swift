#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Per-segment progress of a multi-connection download, in a small file mapped into memory beside the part file.
///
/// Each write to the part file is followed by one store into the mapping: no system call, no database commit, yet
/// the value survives the death of the process (the mapping is the page cache). Like the part file's own bytes, it
/// is trusted only within the same OS boot; after a reboot the segments committed with the last checkpoint are used.
/// Every method must be called under the owner's lock (``SegmentBoard``).
final class SegmentJournal: @unchecked Sendable {
    static let suffix = journalFileSuffix
    static let capacity = 256
    private static let magic: Int64 = 0x4841_554C_5345_4731  // "HAULSEG1"
    private static let headerWords = 4  // magic, generation, count, reserved
    private static let wordsPerSegment = 4  // id, start, end, written
    static var byteSize: Int { (headerWords + capacity * wordsPerSegment) * 8 }

    let path: String
    private let descriptor: Int32
    private let words: UnsafeMutablePointer<Int64>

    /// Opens or creates the journal at `path` (never following a symbolic link; beneath a confined directory, none on
    /// the way either).
    init(path: String) throws(DownloadError) {
        self.path = path
        let fd = PartFile.retryingInterrupts {
            FileSystem.openFile(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        }
        guard fd >= 0 else { throw .fileSystem(errno: errno, path: path, operation: "open") }
        guard ftruncate(fd, off_t(Self.byteSize)) == 0 else {
            let code = errno
            _ = systemClose(fd)
            throw .fileSystem(errno: code, path: path, operation: "truncate")
        }
        guard let mapping = mmap(nil, Self.byteSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
            mapping != MAP_FAILED
        else {
            let code = errno
            _ = systemClose(fd)
            throw .fileSystem(errno: code, path: path, operation: "mmap")
        }
        descriptor = fd
        words = mapping.bindMemory(to: Int64.self, capacity: Self.byteSize / 8)
    }

    /// The plan last written for `generation`, or nil if the journal holds none.
    func read(generation: Int64) -> [Segment]? {
        guard words[0] == Self.magic, words[1] == generation else { return nil }
        let count = Int(words[2])
        guard (1...Self.capacity).contains(count) else { return nil }
        return (0..<count).map { index in
            let base = Self.headerWords + index * Self.wordsPerSegment
            return Segment(
                id: Int(words[base]), start: words[base + 1], end: words[base + 2], written: words[base + 3])
        }
    }

    /// Writes a whole plan (after a split, or when starting).
    func write(_ segments: [Segment], generation: Int64) {
        let count = min(segments.count, Self.capacity)
        words[0] = 0  // invalid while rewriting
        for (index, segment) in segments.prefix(count).enumerated() {
            let base = Self.headerWords + index * Self.wordsPerSegment
            words[base] = Int64(segment.id)
            words[base + 1] = segment.start
            words[base + 2] = segment.end
            words[base + 3] = segment.written
        }
        words[1] = generation
        words[2] = Int64(count)
        words[0] = Self.magic
    }

    /// Records the progress of the segment at `index` in the last written plan.
    func record(index: Int, written: Int64) {
        guard index < Self.capacity else { return }
        words[Self.headerWords + index * Self.wordsPerSegment + 3] = written
    }

    func close() {
        munmap(words, Self.byteSize)
        _ = systemClose(descriptor)
    }
}
