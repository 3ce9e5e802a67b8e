import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SHA-256 of a whole file on disk, read on a blocking thread (``onBlockingPool(_:)``): for a completed
/// download's file that changed on disk, and for ``DownloadManager/verify(_:)``.
enum FileDigest {
    /// The fingerprint of the regular file at `path` (never following a symbolic link) with the SHA-256 of its
    /// bytes, and its digest in each of `others`, lowercase hexadecimal; throws a ``DownloadError`` when it cannot be
    /// read.
    static func read(
        _ path: String, also others: [Checksum.Algorithm] = []
    ) async throws -> (fingerprint: FileFingerprint, digests: [Checksum.Algorithm: String]) {
        try await onBlockingPool { try hash(path, [.sha256] + others.filter { $0 != .sha256 }) }
    }

    /// The SHA-256 of the regular file at `path`, lowercase hexadecimal, read on the calling thread (a blocking
    /// one).
    static func sha256(ofFileAt path: String) throws(DownloadError) -> String? {
        try hash(path, [.sha256]).digests[.sha256]
    }

    private static func hash(
        _ path: String, _ algorithms: [Checksum.Algorithm]
    ) throws(DownloadError) -> (fingerprint: FileFingerprint, digests: [Checksum.Algorithm: String]) {
        // Never blocking in the open: a FIFO put at the name fails to read instead of waiting for a writer.
        let fd = PartFile.retryingInterrupts { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        guard fd >= 0 else { throw .fileSystem(errno: errno, path: path, operation: "open") }
        defer { _ = systemClose(fd) }
        guard var fingerprint = FileFingerprint.of(descriptor: fd) else {
            throw .fileSystem(errno: errno, path: path, operation: "fstat")
        }
        var hashers = algorithms.map { DigestHasher(DigestAlgorithm($0)) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { bytes in
                PartFile.retryingInterrupts { pread(fd, bytes.baseAddress, bytes.count, offset) }
            }
            guard count >= 0 else { throw .fileSystem(errno: errno, path: path, operation: "read") }
            if count == 0 { break }
            buffer.withUnsafeBytes { bytes in
                let chunk = UnsafeRawBufferPointer(rebasing: bytes.prefix(count))
                for index in hashers.indices { hashers[index].update(chunk) }
            }
            offset += off_t(count)
        }
        let digests = Dictionary(uniqueKeysWithValues: zip(algorithms, hashers.map { $0.finalizeHex() }))
        fingerprint.sha256 = digests[.sha256]
        return (fingerprint, digests)
    }
}
