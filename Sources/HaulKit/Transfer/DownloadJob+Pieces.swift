import AsyncHTTPClient
import Foundation
import NIOCore

/// Pieces: a Metalink's piece hashes checked behind the writer, and a piece that fails fetched again alone.
extension DownloadJob {
    /// Fetches each of the `bad` pieces again, alone, by range, from the sources that did not write it first (then
    /// the others), until one sends bytes with the piece's hash; writes them in place. A mirror whose piece fails is
    /// dropped. Returns the failure of the first piece no source sends right (nil when every piece is fixed).
    mutating func refetchPieces(
        _ bad: [Int], pieces: PieceHashes, file: PartFile, total: Int64
    ) async throws -> PieceFailure? {
        for index in bad {
            let range = pieces.range(of: index, size: total)
            let (primary, _, _) = target.current
            let wrote = mirrors.servers(of: range)
            let all: [(url: String, mirror: Int?)] = [(primary, nil)] + mirrors.live.map { ($0.url, $0.index) }
            let candidates = all.filter { !wrote.contains($0.url) } + all.filter { wrote.contains($0.url) }
            var actual = ""
            var fixed = false
            for candidate in candidates {
                logger.info(
                    "fetching a piece again",
                    metadata: ["piece": "\(index)", "source": "\(candidate.url)", "range": "\(range)"])
                guard
                    let bytes = await fetchPiece(
                        range, from: candidate.url, isMirror: candidate.mirror != nil, total: total)
                else { continue }
                var hasher = DigestHasher(pieces.algorithm)
                bytes.withUnsafeReadableBytes { hasher.update($0) }
                actual = hasher.finalizeHex()
                if actual == pieces.hashes[index] {
                    try file.write(bytes, at: range.lowerBound)
                    fixed = true
                    break
                }
                if let mirror = candidate.mirror {
                    let reason =
                        "its piece \(index) (bytes \(range.lowerBound)-\(range.upperBound - 1)) failed its hash"
                    if mirrors.drop(mirror, reason: reason), let address = URL(string: candidate.url) {
                        environment.events.yield(id, .mirrorDropped(address, reason: reason))
                    }
                }
            }
            guard fixed else {
                return PieceFailure(index: index, range: range, algorithm: pieces.algorithm, actual: actual)
            }
        }
        return nil
    }

    /// A piece no source sent right.
    struct PieceFailure {
        var index: Int
        var range: Range<Int64>
        var algorithm: DigestAlgorithm
        var actual: String
    }

    /// The bytes of `range` from `url`: a `206` for exactly that range of a file of `total` bytes (the download's own
    /// source with `If-Range`), or nil.
    private func fetchPiece(_ range: Range<Int64>, from url: String, isMirror: Bool, total: Int64) async -> ByteBuffer?
    {
        let (primary, _, home) = target.current
        guard
            let response = try? await environment.session.get(
                url, home: isMirror ? home ?? primary : home, profile: requestProfile,
                range: "bytes=\(range.lowerBound)-\(range.upperBound - 1)",
                ifRange: isMirror ? nil : record.transfer.validator?.ifRange, logger: logger
            ).response
        else { return nil }
        let head = ResponseHead(response, now: Date())
        guard head.status == 206, let answered = head.contentRange.flatMap(ContentRange.init(parsing:)),
            answered.first == range.lowerBound, answered.last == range.upperBound - 1, answered.completeLength == total
        else {
            _ = try? await response.body.collect(upTo: 1 << 16)
            return nil
        }
        guard let bytes = try? await response.body.collect(upTo: range.count), bytes.readableBytes == range.count
        else { return nil }
        return bytes
    }

    /// Checks the pieces the follower found bad: each is fetched again (``refetchPieces(_:pieces:file:total:)``),
    /// then the whole file is hashed again. Returns the new digests, or throws the failure of a piece no source sent
    /// right (its bytes kept aside as `FILE.bad`).
    mutating func repairPieces(
        _ digests: [DigestAlgorithm: String], file: PartFile, total: Int64, partPath: String, destination: String
    ) async throws -> [DigestAlgorithm: String] {
        guard let pieces = record.options.pieces else { return digests }
        let bad = ledger.pieces.bad
        guard !bad.isEmpty else { return digests }
        logger.notice("pieces failed their hashes", metadata: ["pieces": "\(bad)"])
        if let failure = try await refetchPieces(bad, pieces: pieces, file: file, total: total) {
            throw try await keepBadFile(file, partPath: partPath, destination: destination) { kept in
                .pieceMismatch(
                    failure.index, first: failure.range.lowerBound, last: failure.range.upperBound - 1,
                    algorithm: failure.algorithm, expected: pieces.hashes[failure.index], actual: failure.actual,
                    keptAt: kept)
            }
        }
        startFollower()
        let again = try await follower?.value ?? [:]
        if let still = ledger.pieces.bad.first {
            let range = pieces.range(of: still, size: total)
            throw try await keepBadFile(file, partPath: partPath, destination: destination) { kept in
                .pieceMismatch(
                    still, first: range.lowerBound, last: range.upperBound - 1, algorithm: pieces.algorithm,
                    expected: pieces.hashes[still], actual: "another value", keptAt: kept)
            }
        }
        return again
    }
}
