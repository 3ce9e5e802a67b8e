import Foundation
import NIOCore

/// Verifying what the server stated: the whole file's digest and each response's own, when the file is complete.
extension DownloadJob {
    /// What `--ask-digest` adds to every request: RFC 9530's `Want-Repr-Digest`, and RFC 3230's `Want-Digest` for the
    /// mirror networks that only know that one.
    static let digestWishes = [
        HTTPHeaderField(name: "Want-Repr-Digest", value: "sha-256=10, sha-512=5"),
        HTTPHeaderField(name: "Want-Digest", value: "sha-256;q=1, sha-512;q=0.5, md5;q=0.1"),
    ]

    /// A server digest the bytes did not match.
    struct DigestProblem {
        /// "the file", or "bytes A-B".
        var what: String
        var digest: ExpectedDigest
        var actual: String
        /// The whole file's digest, as opposed to one response's.
        var wholeFile: Bool
    }

    /// A response stated another whole-file digest than an earlier one, with the same validators: the file changed
    /// on the server, so it is fetched again from byte 0.
    mutating func restartForChangedDigest(_ conflict: DigestLedger.Conflict) async throws -> AttemptResult {
        logger.info("restarting", metadata: ["reason": "digest changed", "detail": "\(conflict)"])
        try await rewind(to: 0, because: .resourceChanged)
        return .refetch(.resourceChanged, detail: conflict.description)
    }

    /// The first server digest that `digests` (the whole file's, by algorithm) or the follower's checks of each
    /// response contradict; nil when all agree (or nothing was stated, or verifying is off).
    func serverDigestProblem(_ digests: [DigestAlgorithm: String]) -> DigestProblem? {
        guard ledger.verifies, !ResourceValidator.isDecoded(record.transfer.contentEncoding) else { return nil }
        if let expected = ledger.representation, let actual = digests[expected.algorithm], actual != expected.hex {
            return DigestProblem(what: "the file", digest: expected, actual: actual, wholeFile: true)
        }
        if let failure = ledger.failures.first {
            let part = failure.part
            return DigestProblem(
                what: "bytes \(part.start)-\((part.end ?? part.start) - 1) from \(part.source)", digest: part.digest,
                actual: DigestHasher.hex(failure.actual), wholeFile: false)
        }
        return nil
    }

    /// A complete file that contradicts a server digest: fetched again when the file changed on the server meanwhile
    /// (its validators or its digest are not the same now) or mirrors' bytes are in it; otherwise kept aside as
    /// `FILE.bad` and failed with ``DownloadError/Code/serverDigestMismatch``.
    mutating func rejectForServerDigest(
        _ problem: DigestProblem, file: PartFile, partPath: String, destination: String
    ) async throws -> FinishResult {
        if let change = await changedOnServer(since: problem.wholeFile ? problem.digest : nil) {
            logger.info("the file changed on the server; starting over", metadata: ["detail": "\(change)"])
            try await rewind(to: 0, because: .resourceChanged)
            startFollower()
            return .refetch(.resourceChanged, detail: "the file changed on the server: \(change)")
        }
        let reason = "\(problem.what) failed the server's \(problem.digest.header)"
        if let refetch = try await refetchWithoutMirrors(because: reason) { return refetch }
        throw try await keepBadFile(file, partPath: partPath, destination: destination) { kept in
            .serverDigestMismatch(
                problem.what, algorithm: problem.digest.algorithm, header: problem.digest.header,
                expected: problem.digest.hex, actual: problem.actual, keptAt: kept)
        }
    }

    /// Asks the download's URL for its first byte: how its validators (and the digest of `expected`'s algorithm)
    /// differ from those the file was fetched with, or nil when they are the same (or it could not be asked).
    mutating func changedOnServer(since expected: ExpectedDigest?) async -> String? {
        let (url, _, home) = target.current
        guard
            let response = try? await environment.session.get(
                url, home: home, profile: requestProfile, range: "bytes=0-0", logger: logger
            ).response
        else { return nil }
        let head = ResponseHead(response, now: Date())
        _ = try? await response.body.collect(upTo: 1 << 16)
        guard head.status == 200 || head.status == 206 else { return nil }
        var now = head.validator
        now.totalBytes =
            head.status == 206
            ? head.contentRange.flatMap(ContentRange.init(parsing:))?.completeLength : head.contentLength
        if let recorded = record.transfer.validator, let change = recorded.differs(from: now) { return change }
        if let expected,
            let stated = head.digests.representation.first(where: { $0.algorithm == expected.algorithm }),
            stated.bytes != expected.bytes
        {
            return "its \(stated.header) is \(stated.hex) now, not \(expected.hex)"
        }
        return nil
    }

    /// What the complete file was verified against (`digests`: its digests by algorithm, all of which matched).
    func verification(_ digests: [DigestAlgorithm: String]) -> DownloadVerification {
        var checks: [DownloadVerification.Check] = []
        if let checksum = record.options.checksum {
            checks.append(.init(algorithm: DigestAlgorithm(checksum.algorithm), source: record.options.checksumSource))
        }
        if let pieces = record.options.pieces, case (let checked, let bad) = ledger.pieces, checked > 0, bad.isEmpty {
            checks.append(.init(algorithm: pieces.algorithm, source: .metalink, parts: checked))
        }
        let decoded = ResourceValidator.isDecoded(record.transfer.contentEncoding)
        if ledger.verifies, !decoded {
            if let expected = ledger.representation, digests[expected.algorithm] == expected.hex {
                checks.append(.init(algorithm: expected.algorithm, source: .server, header: expected.header))
            }
            for parts in ledger.verifiedParts {
                checks.append(
                    .init(algorithm: parts.algorithm, source: .server, header: parts.header, parts: parts.count))
            }
        }
        let reason =
            !ledger.sawDigests
            ? "the server sent no digest"
            : !ledger.verifies
                ? "the server's digest was not checked (--no-verify-server-digest)"
                : decoded
                    ? "the server's digest covers the compressed bytes, which Haul decoded" : "no digest was known"
        return DownloadVerification(checks: checks, unverifiedBecause: reason)
    }

    /// The digests of a body held in memory, checked as the follower checks a part file: the whole file's (SHA-256
    /// and the server's algorithm) and each response's own (a held body is one response, from byte 0).
    func heldDigests(_ chunks: [ByteBuffer]) -> [DigestAlgorithm: String] {
        let wanted = [DigestAlgorithm.sha256] + (ledger.representation.map { [$0.algorithm] } ?? [])
        let digests = ChecksumFollower.digests(of: chunks, wanted)
        for part in ledger.pendingParts(generation: state.current.generation) {
            guard part.start == 0, part.end == Int64(chunks.reduce(0) { $0 + $1.readableBytes }) else { continue }
            var hasher = DigestHasher(part.digest.algorithm)
            for chunk in chunks { chunk.withUnsafeReadableBytes { hasher.update($0) } }
            ledger.checked(part.id, actual: hasher.finalize())
        }
        return digests
    }
}
