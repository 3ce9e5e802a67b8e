import Crypto
import Foundation

/// Hashes a part file behind its writer, reading back what was written, so hashing never slows the receive path.
///
/// A resumed download rehashes its prefix once (reads from the page cache). When the part file is cut back (a new
/// generation), the hash starts over. Finishes when the writer marks the transfer finished and all is hashed.
struct ChecksumFollower: Sendable {
    let algorithm: Checksum.Algorithm
    let state: TransferState
    /// The clock the waits for more bytes sleep on (the tick clock).
    let clock: any Clock<Duration>
    /// How long to wait when caught up with the writer.
    var idleWait: Duration = .milliseconds(5)
    static let readSize = 1 << 20

    /// The lowercase hex digest of the finished file.
    func digest() async throws -> String {
        var hasher = AnyHasher(algorithm)
        var hashed: Int64 = 0
        var generation: Int64 = -1
        var buffer = [UInt8](repeating: 0, count: Self.readSize)
        while true {
            try Task.checkCancellation()
            let now = state.current
            if now.generation != generation {
                hasher = AnyHasher(algorithm)
                hashed = 0
                generation = now.generation
            }
            guard let file = now.file, hashed < now.written else {
                if now.finished, hashed == now.written { return hasher.finalize() }
                try await clock.sleep(for: idleWait)
                continue
            }
            let count = Int(min(Int64(Self.readSize), now.written - hashed))
            let read = try file.read(into: &buffer, count: count, at: hashed)
            guard read == count else {
                // Cut back while reading: the next turn sees the new generation.
                try await clock.sleep(for: idleWait)
                continue
            }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0.prefix(read))) }
            hashed += Int64(read)
            await Task.yield()
        }
    }
}

/// One of the supported digests behind one type.
struct AnyHasher {
    private enum Storage {
        case sha256(SHA256)
        case sha1(Insecure.SHA1)
        case md5(Insecure.MD5)
    }

    private var storage: Storage

    init(_ algorithm: Checksum.Algorithm) {
        switch algorithm {
        case .sha256: storage = .sha256(SHA256())
        case .sha1: storage = .sha1(Insecure.SHA1())
        case .md5: storage = .md5(Insecure.MD5())
        }
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch storage {
        case .sha256(var hasher):
            hasher.update(bufferPointer: bytes)
            storage = .sha256(hasher)
        case .sha1(var hasher):
            hasher.update(bufferPointer: bytes)
            storage = .sha1(hasher)
        case .md5(var hasher):
            hasher.update(bufferPointer: bytes)
            storage = .md5(hasher)
        }
    }

    func finalize() -> String {
        switch storage {
        case .sha256(let hasher): hex(hasher.finalize())
        case .sha1(let hasher): hex(hasher.finalize())
        case .md5(let hasher): hex(hasher.finalize())
        }
    }

    private func hex<D: Digest>(_ digest: D) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}
