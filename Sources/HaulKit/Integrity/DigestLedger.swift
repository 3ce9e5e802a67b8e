import Synchronization

/// What the sources of one download said about its bytes, and what checking them found: shared by its connections
/// (which note each response's digests), its ``ChecksumFollower`` (which computes them behind the writer) and the job
/// (which reads the verdict when the file is complete).
///
/// The whole representation's digest is taken from the first response that states one; a later response that
/// states another value for the same algorithm, with the same validators, means the file changed behind them
/// (``noteRepresentation(_:)`` returns the conflict). A response's own digest (`Content-Digest`, `Content-MD5`)
/// covers the bytes of that response: it is registered as a *part* before its body is written and checked by the
/// follower once it has read that range back, unless the response ended short (then it is abandoned: a digest of
/// the whole content says nothing about a prefix).
final class DigestLedger: Sendable {
    /// A range the follower must check against a response's own digest.
    struct Part: Sendable, Equatable {
        var id: Int
        /// The part file's generation when the response began: a part of an older generation is void.
        var generation: Int64
        var start: Int64
        /// One past its last byte; nil until a body of unknown length ends.
        var end: Int64?
        var digest: ExpectedDigest
        /// Where it came from, for messages.
        var source: String
        var abandoned = false
    }

    /// A part whose bytes did not have the digest its response stated.
    struct PartFailure: Sendable, Equatable {
        var part: Part
        var actual: [UInt8]
    }

    private struct State {
        var representation: [DigestAlgorithm: ExpectedDigest] = [:]
        var parts: [Int: Part] = [:]
        var nextID = 0
        var failures: [PartFailure] = []
        var verifiedParts: [String: (algorithm: DigestAlgorithm, count: Int)] = [:]
        /// Whether any response of this copy brought digests (kept when they are ignored, for the final word).
        var sawDigests = false
        /// Pieces (of a Metalink's piece hashes) checked, and those that failed.
        var piecesChecked = 0
        var badPieces: Set<Int> = []
    }

    private let state = Mutex(State())
    /// False with ``ServerDigestPolicy/ignore``: digests are only noticed, for the final word.
    let verifies: Bool

    init(verifies: Bool = true) { self.verifies = verifies }

    /// A response stated another whole-file digest than an earlier one, with the same validators: the file changed.
    struct Conflict: Error, CustomStringConvertible {
        var earlier: ExpectedDigest
        var now: ExpectedDigest
        var description: String {
            "the server's \(now.header) changed from \(earlier.algorithm)=\(earlier.hex) to \(now.hex)"
        }
    }

    /// Notes what a response states: its whole-file digests when `representation` (a response of the source that
    /// establishes the file), and its own content's digest as a part from `bodyStart`, `length` bytes long (nil:
    /// until the body ends). Returns the part's id, to end when the body ends.
    func note(
        _ digests: ServerDigests, representation: Bool, bodyStart: Int64, length: Int64?, generation: Int64,
        source: String
    ) throws(Conflict) -> Int? {
        guard !digests.isEmpty else { return nil }
        guard verifies else {
            state.withLock { $0.sawDigests = true }
            return nil
        }
        if representation, let conflict = noteRepresentation(digests.representation) {
            throw Conflict(earlier: conflict.earlier, now: conflict.now)
        }
        guard let digest = ExpectedDigest.preferred(digests.content) else { return nil }
        return beginPart(
            digest, start: bodyStart, end: length.map { bodyStart + $0 }, generation: generation, source: source)
    }

    /// Notes the whole-representation digests of a response. Returns the earlier digest a new one contradicts (the
    /// same algorithm, another value), if any.
    func noteRepresentation(_ digests: [ExpectedDigest]) -> (earlier: ExpectedDigest, now: ExpectedDigest)? {
        state.withLock { state in
            if !digests.isEmpty { state.sawDigests = true }
            for digest in digests {
                if let earlier = state.representation[digest.algorithm] {
                    if earlier.bytes != digest.bytes { return (earlier, digest) }
                } else {
                    state.representation[digest.algorithm] = digest
                }
            }
            return nil
        }
    }

    /// The whole-representation digest to verify (the preferred algorithm among those stated), if any.
    var representation: ExpectedDigest? {
        state.withLock { ExpectedDigest.preferred(Array($0.representation.values)) }
    }

    /// Every whole-representation digest stated so far.
    var representationDigests: [ExpectedDigest] { state.withLock { Array($0.representation.values) } }

    /// Registers a response's own digest for `start..<end` (end nil: not known until the body ends); returns the
    /// part's id.
    func beginPart(
        _ digest: ExpectedDigest, start: Int64, end: Int64?, generation: Int64, source: String
    ) -> Int {
        state.withLock { state in
            state.sawDigests = true
            let id = state.nextID
            state.nextID += 1
            state.parts[id] = Part(
                id: id, generation: generation, start: start, end: end, digest: digest, source: source)
            return id
        }
    }

    /// The response of part `id` ended: with all of its content (its end is `end`), or short (abandoned).
    func endPart(_ id: Int?, complete: Bool, end: Int64) {
        guard let id else { return }
        state.withLock { state in
            guard var part = state.parts[id] else { return }
            if complete, part.end == nil || part.end == end {
                part.end = end
            } else if !complete || part.end != end {
                part.abandoned = true
            }
            state.parts[id] = part
        }
    }

    /// The parts of `generation` still to check (abandoned ones are forgotten here).
    func pendingParts(generation: Int64) -> [Part] {
        state.withLock { state in
            state.parts = state.parts.filter { !$0.value.abandoned && $0.value.generation == generation }
            return Array(state.parts.values)
        }
    }

    /// The follower checked part `id`: `actual` is the digest of its bytes in the part file.
    func checked(_ id: Int, actual: [UInt8]) {
        state.withLock { state in
            guard let part = state.parts.removeValue(forKey: id), !part.abandoned else { return }
            if actual == part.digest.bytes {
                let header = part.digest.header
                state.verifiedParts[header, default: (part.digest.algorithm, 0)].count += 1
            } else {
                state.failures.append(PartFailure(part: part, actual: actual))
            }
        }
    }

    /// The parts whose bytes differ from their responses' digests.
    var failures: [PartFailure] { state.withLock { $0.failures } }

    /// How many parts each header's digest verified, and with which algorithm.
    var verifiedParts: [(header: String, algorithm: DigestAlgorithm, count: Int)] {
        state.withLock { state in
            state.verifiedParts.map { ($0.key, $0.value.algorithm, $0.value.count) }.sorted { $0.header < $1.header }
        }
    }

    /// Whether any response stated a digest.
    var sawDigests: Bool { state.withLock { $0.sawDigests } }

    /// The response of part `id` failed or was cut: its digest says nothing about the bytes it wrote.
    func abandonPart(_ id: Int?) {
        guard let id else { return }
        state.withLock { $0.parts[id]?.abandoned = true }
    }

    /// The follower checked piece `index` of the file's piece hashes.
    func checkedPiece(_ index: Int, good: Bool) {
        state.withLock { state in
            state.piecesChecked += 1
            if !good { state.badPieces.insert(index) }
        }
    }

    /// The pieces that failed their hashes, in order, and how many were checked.
    var pieces: (checked: Int, bad: [Int]) { state.withLock { ($0.piecesChecked, $0.badPieces.sorted()) } }

    /// The pieces are checked again (after bad ones were fetched again).
    func forgetPieces() {
        state.withLock {
            $0.piecesChecked = 0
            $0.badPieces = []
        }
    }

    /// The file is fetched again from byte 0 (another version, or a failed check): nothing said so far applies.
    func reset() {
        state.withLock { $0 = State() }
    }
}
