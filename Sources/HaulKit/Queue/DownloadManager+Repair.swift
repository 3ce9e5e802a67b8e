import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DownloadManager {
    /// Re-checks a completed download's file piece by piece against its piece hashes (`pieces`, else those it was
    /// downloaded with, a Metalink's) and fetches only the bad pieces again, by range, with `If-Range` (the validators
    /// it was downloaded with), writing each in place once it has its hash; then reads the whole file back: it must
    /// have the SHA-256 recorded when it completed.
    ///
    /// Throws ``DownloadError/Code/invalidRequest`` when there are no piece hashes, ``DownloadError/Code/resourceChanged``
    /// when the server's file is another version now (`If-Range` answered with the whole file: download it again),
    /// and ``DownloadError/Code/checksumMismatch`` when a piece cannot be fetched right or the repaired file still
    /// differs.
    public func repair(_ id: DownloadID, pieces given: PieceHashes? = nil) async throws -> RepairReport {
        let record = try await existing(id)
        guard record.state == .completed, let path = record.destinationPath else {
            throw DownloadError.invalidRequest(
                "download \(id) is \(record.state.rawValue), not completed: nothing to repair")
        }
        guard let pieces = given ?? record.options.pieces else {
            throw DownloadError.invalidRequest(
                "download \(id) has no piece hashes (give a Metalink with --metalink): only its whole SHA-256 is known, "
                    + "which says that the file differs, not where; 'haul verify \(id)' checks it")
        }
        let bad = try await PieceCheck.badPieces(path, pieces)
        var report = RepairReport(
            id: id, file: URL(fileURLWithPath: path), pieceCount: pieces.hashes.count, badPieces: bad, fetchedBytes: 0)
        guard !bad.isEmpty else {
            report.matchesRecordedSHA256 = nil
            return report
        }
        let size = record.transfer.totalBytes ?? record.fingerprint?.size ?? Int64(pieces.hashes.count) * pieces.length
        let url = record.transfer.finalURL ?? record.url
        let profile = RequestProfile(
            userAgent: configuration.userAgent, custom: record.options.headers,
            credentials: record.options.credentials, redirects: record.options.redirects)
        let fd = PartFile.retryingInterrupts { open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { throw DownloadError.fileSystem(errno: errno, path: path, operation: "open") }
        defer { _ = systemClose(fd) }
        for index in bad {
            let range = pieces.range(of: index, size: size)
            let (response, _) = try await session.get(
                url, home: record.url, profile: profile, range: "bytes=\(range.lowerBound)-\(range.upperBound - 1)",
                ifRange: record.transfer.validator?.ifRange, logger: configuration.logger)
            let head = ResponseHead(response, now: Date())
            guard head.status == 206 else {
                _ = try? await response.body.collect(upTo: 1 << 16)
                if head.status == 200 {
                    throw DownloadError.resourceChanged(
                        "the server's copy is another version now (If-Range answered with the whole file): download "
                            + "it again")
                }
                throw DownloadError.httpStatus(head.status, reason: head.reason, url: url)
            }
            let bytes = try await response.body.collect(upTo: range.count)
            report.fetchedBytes += Int64(bytes.readableBytes)
            var hasher = DigestHasher(pieces.algorithm)
            bytes.withUnsafeReadableBytes { hasher.update($0) }
            let actual = hasher.finalizeHex()
            guard bytes.readableBytes == range.count, actual == pieces.hashes[index] else {
                throw DownloadError.pieceMismatch(
                    index, first: range.lowerBound, last: range.upperBound - 1, algorithm: pieces.algorithm,
                    expected: pieces.hashes[index], actual: actual)
            }
            let written = bytes.withUnsafeReadableBytes { raw in
                PartFile.retryingInterrupts { pwrite(fd, raw.baseAddress, raw.count, off_t(range.lowerBound)) }
            }
            guard written == range.count else {
                throw DownloadError.fileSystem(errno: errno, path: path, operation: "write")
            }
        }
        _ = fsync(fd)
        let (fingerprint, _) = try await FileDigest.read(path)
        if let recorded = record.fingerprint?.sha256 {
            report.matchesRecordedSHA256 = fingerprint.sha256 == recorded
            guard fingerprint.sha256 == recorded else {
                throw DownloadError(
                    code: .checksumMismatch,
                    summary: "the repaired file's sha256 is \(fingerprint.sha256 ?? "?"), not the \(recorded) Haul "
                        + "recorded: it differs outside the pieces, or the piece hashes are not this file's",
                    suggestion: "download it again: 'haul remove \(id) --delete-file', then the same haul get",
                    isTransient: false)
            }
        }
        var updated = record
        var kept = fingerprint
        kept.verification = record.fingerprint?.verification
        updated.fingerprint = kept
        records[id] = updated
        try? await store.saveLifecycle([updated])
        return report
    }
}
