import Crypto
import Foundation
import NIOCore

/// Hashes a part file behind its writer, reading back what was written, so hashing never slows the receive path.
///
/// It computes the SHA-256 every completed download keeps (its ``FileFingerprint``) and, in the same pass, the digest
/// of an expected checksum in another algorithm, the whole-representation digest a server stated (in the
/// ``DigestLedger``, in whatever algorithm: one that appears late is caught up from byte 0 once), and the digest of
/// each response that stated its own (`Content-Digest`, `Content-MD5`: a part of the file, checked once read past,
/// its start read back first when it lies behind, as a resumed response's overlap does). A resumed download rehashes
/// its prefix once (reads from the page cache). When the part file is cut back (a new generation), the hash starts
/// over. Finishes when the writer marks the transfer finished and all is hashed.
struct ChecksumFollower: Sendable {
    let algorithms: [DigestAlgorithm]
    let state: TransferState
    /// What the sources stated: whole-file digests to compute, parts to check.
    let ledger: DigestLedger
    /// A Metalink's piece hashes: each piece is checked as the follower passes its end (results in the ledger).
    let pieces: PieceHashes?
    /// The clock the waits for more bytes sleep on (the tick clock).
    let clock: any Clock<Duration>
    /// How long to wait when caught up with the writer.
    var idleWait: Duration = .milliseconds(5)
    static let readSize = 1 << 20

    /// Follows with SHA-256 and, if it is another, `checksum`'s algorithm, plus what `ledger` asks for.
    init(
        checksum: Checksum.Algorithm?, state: TransferState, ledger: DigestLedger, pieces: PieceHashes? = nil,
        clock: any Clock<Duration>
    ) {
        self.pieces = pieces
        let extra = checksum.map(DigestAlgorithm.init)
        algorithms = [.sha256] + (extra.map { $0 == .sha256 ? [] : [$0] } ?? [])
        self.state = state
        self.ledger = ledger
        self.clock = clock
    }

    /// A part being checked: its hasher and the next byte it needs.
    private struct PartProgress {
        var part: DigestLedger.Part
        var hasher: DigestHasher
        var next: Int64
    }

    /// The lowercase hex digests of the finished file, by algorithm.
    func digests() async throws -> [DigestAlgorithm: String] {
        var hashers: [DigestAlgorithm: DigestHasher] = [:]
        var parts: [Int: PartProgress] = [:]
        var hashed: Int64 = 0
        var generation: Int64 = -1
        var buffer: [UInt8] = []
        var piece = PieceProgress()
        while true {
            try Task.checkCancellation()
            let now = state.current
            if now.generation != generation {
                hashers = Dictionary(uniqueKeysWithValues: algorithms.map { ($0, DigestHasher($0)) })
                parts = [:]
                piece = PieceProgress()
                hashed = 0
                generation = now.generation
            }
            if let file = now.file {
                try catchUp(file, hashed: hashed, generation: generation, hashers: &hashers, parts: &parts)
                finishParts(&parts)
            }
            guard let file = now.file, hashed < now.written else {
                if now.finished, hashed == now.written {
                    if let pieces, piece.fed > 0 { piece.finish(pieces, ledger) }
                    return hashers.mapValues { $0.finalizeHex() }
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
            let chunkStart = hashed
            buffer.withUnsafeBytes { bytes in
                let chunk = UnsafeRawBufferPointer(rebasing: bytes.prefix(read))
                Self.update(&hashers, with: chunk)
                if let pieces { piece.feed(chunk, pieces, ledger) }
                for id in parts.keys {
                    let progress = parts[id]!
                    let from = progress.next - chunkStart
                    let to = min(Int64(read), (progress.part.end ?? .max) - chunkStart)
                    guard from >= 0, from < to else { continue }
                    parts[id]!.hasher.update(UnsafeRawBufferPointer(rebasing: chunk[Int(from)..<Int(to)]))
                    parts[id]!.next = chunkStart + to
                }
            }
            hashed += Int64(read)
            state.update { if $0.generation == generation { $0.verified = hashed } }
            finishParts(&parts)
            await Task.yield()
        }
    }

    /// Feeds `chunk` to every hasher; two or more at once on their own threads (SHA-512 beside the SHA-256 every
    /// download computes would otherwise halve the follower's speed, and the download waits for it at its end).
    static func update(_ hashers: inout [DigestAlgorithm: DigestHasher], with chunk: UnsafeRawBufferPointer) {
        guard hashers.count > 1 else {
            for algorithm in hashers.keys { hashers[algorithm]!.update(chunk) }
            return
        }
        var list = Array(hashers)
        list.withUnsafeMutableBufferPointer { each in
            // Each iteration touches only its own hasher.
            nonisolated(unsafe) let each = each
            nonisolated(unsafe) let chunk = chunk
            DispatchQueue.concurrentPerform(iterations: each.count) { index in each[index].value.update(chunk) }
        }
        hashers = Dictionary(uniqueKeysWithValues: list)
    }

    /// The piece being hashed: its index, its hasher and how many of its bytes were fed.
    private struct PieceProgress {
        var index = 0
        var hasher: DigestHasher?
        var fed: Int64 = 0

        /// Hashes `chunk` (the next bytes of the file) into the pieces it covers, reporting each piece it ends.
        mutating func feed(_ chunk: UnsafeRawBufferPointer, _ pieces: PieceHashes, _ ledger: DigestLedger) {
            var offset = 0
            while offset < chunk.count {
                if hasher == nil { hasher = DigestHasher(pieces.algorithm) }
                let take = min(chunk.count - offset, Int(pieces.length - fed))
                hasher!.update(UnsafeRawBufferPointer(rebasing: chunk[offset..<offset + take]))
                fed += Int64(take)
                offset += take
                if fed == pieces.length { finish(pieces, ledger) }
            }
        }

        /// Compares the piece with its hash (a piece past the list is not checked) and starts the next.
        mutating func finish(_ pieces: PieceHashes, _ ledger: DigestLedger) {
            if let hasher, index < pieces.hashes.count {
                ledger.checkedPiece(index, good: hasher.finalizeHex() == pieces.hashes[index])
            }
            index += 1
            hasher = nil
            fed = 0
        }
    }

    /// Starts what the ledger asks for that is not followed yet: a whole-file algorithm (hashed from byte 0 up to
    /// `hashed` at once) and new parts (their bytes before `hashed` read back now); forgets abandoned parts.
    private func catchUp(
        _ file: PartFile, hashed: Int64, generation: Int64, hashers: inout [DigestAlgorithm: DigestHasher],
        parts: inout [Int: PartProgress]
    ) throws {
        if let wanted = ledger.representation?.algorithm, hashers[wanted] == nil {
            var hasher = DigestHasher(wanted)
            try read(file, from: 0, to: hashed) { hasher.update($0) }
            hashers[wanted] = hasher
        }
        let pending = ledger.pendingParts(generation: generation)
        let live = Set(pending.map(\.id))
        parts = parts.filter { live.contains($0.key) }
        for part in pending {
            if var progress = parts[part.id] {
                progress.part.end = part.end
                parts[part.id] = progress
                continue
            }
            var progress = PartProgress(part: part, hasher: DigestHasher(part.digest.algorithm), next: part.start)
            let upTo = min(hashed, part.end ?? .max)
            if progress.next < upTo {
                try read(file, from: progress.next, to: upTo) { progress.hasher.update($0) }
                progress.next = upTo
            }
            parts[part.id] = progress
        }
    }

    /// Reports each part whose every byte is hashed.
    private func finishParts(_ parts: inout [Int: PartProgress]) {
        for (id, progress) in parts where progress.part.end == progress.next {
            ledger.checked(id, actual: progress.hasher.finalize())
            parts[id] = nil
        }
    }

    /// Reads `start..<end` of the part file in pieces, handing each to `body`.
    private func read(
        _ file: PartFile, from start: Int64, to end: Int64, _ body: (UnsafeRawBufferPointer) -> Void
    ) throws {
        var buffer = [UInt8](repeating: 0, count: Int(min(Int64(Self.readSize), max(0, end - start))))
        var position = start
        while position < end {
            let count = Int(min(Int64(buffer.count), end - position))
            let read = try file.read(into: &buffer, count: count, at: position)
            guard read > 0 else { return }
            buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0.prefix(read))) }
            position += Int64(read)
        }
    }

    /// The SHA-256 of a body held in memory, in lowercase hex.
    static func sha256(of chunks: [ByteBuffer]) -> String {
        digests(of: chunks, [.sha256])[.sha256] ?? ""
    }

    /// The digests of a body held in memory, in lowercase hex, by algorithm.
    static func digests(of chunks: [ByteBuffer], _ algorithms: [DigestAlgorithm]) -> [DigestAlgorithm: String] {
        var hashers = algorithms.map(DigestHasher.init)
        for chunk in chunks {
            chunk.withUnsafeReadableBytes { bytes in
                for index in hashers.indices { hashers[index].update(bytes) }
            }
        }
        var digests = [DigestAlgorithm: String](minimumCapacity: hashers.count)
        for hasher in hashers where digests[hasher.algorithm] == nil {
            digests[hasher.algorithm] = hasher.finalizeHex()
        }
        return digests
    }
}
