import Crypto
import Foundation
import NIOCore

/// Hashes a part file behind its writer, reading back what was written, so hashing never slows the receive path.
///
/// It computes the SHA-256 every completed download keeps (its ``FileFingerprint``) and, in the same pass, the digest
/// of an expected checksum in another algorithm. A resumed download rehashes its prefix once (reads from the page
/// cache). When the part file is cut back (a new generation), the hash starts over. Finishes when the writer marks
/// the transfer finished and all is hashed.
struct ChecksumFollower: Sendable {
    let algorithms: [Checksum.Algorithm]
    let state: TransferState
    /// The clock the waits for more bytes sleep on (the tick clock).
    let clock: any Clock<Duration>
    /// How long to wait when caught up with the writer.
    var idleWait: Duration = .milliseconds(5)
    static let readSize = 1 << 20

    /// Follows with SHA-256 and, if it is another, `checksum`'s algorithm.
    init(checksum: Checksum.Algorithm?, state: TransferState, clock: any Clock<Duration>) {
        algorithms = [.sha256] + (checksum.map { $0 == .sha256 ? [] : [$0] } ?? [])
        self.state = state
        self.clock = clock
    }

    /// The lowercase hex digests of the finished file, by algorithm.
    func digests() async throws -> [Checksum.Algorithm: String] {
        var hashers = algorithms.map(AnyHasher.init)
        var hashed: Int64 = 0
        var generation: Int64 = -1
        var buffer: [UInt8] = []
        while true {
            try Task.checkCancellation()
            let now = state.current
            if now.generation != generation {
                hashers = algorithms.map(AnyHasher.init)
                hashed = 0
                generation = now.generation
            }
            guard let file = now.file, hashed < now.written else {
                if now.finished, hashed == now.written {
                    return Dictionary(uniqueKeysWithValues: zip(algorithms, hashers.map { $0.finalize() }))
                }
                try await clock.sleep(for: idleWait)
                continue
            }
            let count = Int(min(Int64(Self.readSize), now.written - hashed))
            if buffer.count < count { buffer = [UInt8](repeating: 0, count: Self.readSize) }
            let read = try file.read(into: &buffer, count: count, at: hashed)
            guard read == count else {
                // Cut back while reading: the next turn sees the new generation.
                try await clock.sleep(for: idleWait)
                continue
            }
            buffer.withUnsafeBytes { bytes in
                let chunk = UnsafeRawBufferPointer(rebasing: bytes.prefix(read))
                for index in hashers.indices { hashers[index].update(chunk) }
            }
            hashed += Int64(read)
            await Task.yield()
        }
    }

    /// The SHA-256 of a body held in memory, in lowercase hex.
    static func sha256(of chunks: [ByteBuffer]) -> String {
        var hasher = AnyHasher(.sha256)
        for chunk in chunks { chunk.withUnsafeReadableBytes { hasher.update($0) } }
        return hasher.finalize()
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
