import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks a file on disk piece by piece against its piece hashes, on a blocking thread: for `haul verify` and
/// `haul repair`.
enum PieceCheck {
    /// The indexes of the pieces of the file at `path` whose bytes do not have their hash (a piece the file is too
    /// short for counts as bad).
    static func badPieces(_ path: String, _ pieces: PieceHashes) async throws -> [Int] {
        try await onBlockingPool { try scan(path, pieces) }
    }

    private static func scan(_ path: String, _ pieces: PieceHashes) throws(DownloadError) -> [Int] {
        let fd = PartFile.retryingInterrupts { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { throw .fileSystem(errno: errno, path: path, operation: "open") }
        defer { _ = systemClose(fd) }
        var bad: [Int] = []
        var buffer = [UInt8](repeating: 0, count: Int(min(pieces.length, 1 << 20)))
        for index in pieces.hashes.indices {
            var hasher = DigestHasher(pieces.algorithm)
            var offset = off_t(Int64(index) * pieces.length)
            let end = offset + off_t(pieces.length)
            var read: Int64 = 0
            while offset < end {
                let want = Int(min(off_t(buffer.count), end - offset))
                let count = buffer.withUnsafeMutableBytes { bytes in
                    PartFile.retryingInterrupts { pread(fd, bytes.baseAddress, want, offset) }
                }
                guard count >= 0 else { throw .fileSystem(errno: errno, path: path, operation: "read") }
                if count == 0 { break }
                buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
                offset += off_t(count)
                read += Int64(count)
            }
            if read == 0 || hasher.finalizeHex() != pieces.hashes[index] { bad.append(index) }
        }
        return bad
    }
}
