import Foundation

/// The user's side of completed downloads: their files compared with what Haul put there before a download is said
/// to be complete, fetched again when they changed, and read back whole by ``verify(_:)``.
extension DownloadManager {
    /// What a completed download's file is now, compared with its fingerprint (size, time, identity; not its bytes).
    /// A download completed before fingerprints were kept is compared by size alone.
    func fileComparison(of record: DownloadRecord) -> FileFingerprint.Comparison {
        guard let path = record.destinationPath else { return .missing }
        if let fingerprint = record.fingerprint { return fingerprint.compare(withFileAt: path) }
        let entry = FileSystem.entry(at: path)
        guard case .regularFile(let size) = entry else { return FileFingerprint.notAFile(entry) }
        guard let total = record.transfer.totalBytes, size != total else { return .unchanged }
        return size < total ? .shorter(size: size) : .changed(size: size)
    }

    /// Before a completed download is said to be complete again (added again, resumed): if its file changed on disk,
    /// it is fetched again (a shorter file resumed from its bytes; the user's file replaced only when the new one is
    /// complete), or fails when the file is to be kept (``ExistingFilePolicy/keep``) or cannot be replaced. An
    /// unchanged file is still run again, to read it, when `newChecksum` was given that its recorded SHA-256 cannot
    /// settle, or to ask the server whether it has a newer copy (``ExistingFilePolicy/replaceIfNewer``, `-N`).
    /// Returns what became of it.
    @discardableResult
    func checkCompletedFile(_ id: DownloadID, newChecksum: Bool = false) async -> CompletedFileCheck {
        guard var record = records[id], record.state == .completed, lifecycle.phase(of: id) == .completed,
            let path = record.destinationPath
        else { return .complete }
        let comparison = fileComparison(of: record)
        if comparison == .unchanged {
            let checksum = newChecksum ? record.options.checksum : nil
            if let checksum, checksum.algorithm == .sha256, let sha256 = record.fingerprint?.sha256,
                sha256 != checksum.hex
            {
                // The file Haul wrote does not have the checksum given now: fetched again, kept only if it does.
                return await reopen(record, how: "does not have the sha256 given (it has \(sha256))", resumed: false)
            }
            if let checksum, checksum.algorithm == .sha256, let sha256 = record.fingerprint?.sha256,
                sha256 == checksum.hex
            {
                // The file Haul wrote has the checksum given now: verified against it, without reading it again.
                await verified(&record, against: checksum)
            }
            let unsettled = checksum != nil && (checksum?.algorithm != .sha256 || record.fingerprint?.sha256 == nil)
            if record.fingerprint?.keptNotFetched == true, record.options.existingFile == .replace {
                // A file that was there already, kept by `--no-clobber`, never fetched: `--overwrite` fetches it now.
                return await reopen(
                    record, how: "was kept as it was found (--no-clobber), never downloaded", resumed: false)
            }
            guard unsettled || record.options.existingFile == .replaceIfNewer else { return .complete }
            // The job reads the file (or asks the server) before fetching anything.
            return await reopen(record, how: nil, resumed: false)
        }
        let how = describe(comparison, of: record)
        let policy = record.options.existingFile
        var refusal: DownloadError?
        switch comparison {
        case .replaced(let what) where what == "a directory" || policy != .replace:
            // --overwrite replaces a link or a special file, never a directory.
            let remedy = what == "a directory" ? "move it away" : "move it away (or use --overwrite)"
            refusal = .destinationNotWritable(path: path, reason: "it \(how): \(remedy)")
        case .shorter, .changed:
            if policy == .keep { refusal = .fileChanged(path: path, how: how) }
        case .unchanged, .missing, .replaced:
            break
        }
        if let refusal {
            record.lastError = refusal
            records[id] = record
            await perform(lifecycle.fileRefused(id))
            return .refused
        }
        // Fetched again into a part file: the user's file stays until the new one is complete.
        var resumed = false
        if case .shorter(let size) = comparison, record.fingerprint?.sha256 != nil, let partPath = record.partPath,
            FileSystem.entry(at: partPath) == .none, (try? FileSystem.rename(path, to: partPath)) != nil
        {
            // A prefix, perhaps: resumed from its bytes (the overlap check at the resume point), and the whole file
            // must then have the SHA-256 it had.
            record.transfer.durableBytes = size
            resumed = true
        }
        return await reopen(record, how: how, resumed: resumed)
    }

    /// Records that the completed file of `record` matches `checksum`, given after it completed (its verification
    /// said what it was checked against then).
    private func verified(_ record: inout DownloadRecord, against checksum: Checksum) async {
        let check = DownloadVerification.Check(
            algorithm: DigestAlgorithm(checksum.algorithm), source: record.options.checksumSource)
        let verification = DownloadVerification.adding(check, to: record.fingerprint?.verification)
        guard record.fingerprint?.verification != verification else { return }
        record.fingerprint?.verification = verification
        record.updatedAt = Date()
        records[record.downloadID] = record
        do {
            try await store.saveLifecycle([record])
        } catch {
            configuration.logger.error("cannot record a verification", metadata: ["download": "\(record.downloadID)"])
        }
        hub.yield(record.downloadID, .verified(verification, sources: []))
    }

    /// Queues a completed download again, to run from its part file (`resumed`) or from nothing; says `how` its file
    /// changed, when it did.
    private func reopen(_ record: DownloadRecord, how: String?, resumed: Bool) async -> CompletedFileCheck {
        var record = record
        let id = record.downloadID
        // Completed still: a verification recorded before this awaited the store, and another process may have
        // queued it or removed it meanwhile (its record here is then newer than `record`).
        guard lifecycle.phase(of: id) == .completed else { return .complete }
        record.transfer.finalizing = false
        record.transfer.segments = nil
        record.transfer.generation += 1
        record.transfer.hasPartData = resumed
        if resumed {
            record.transfer.bootID = BootIdentity.current
        } else {
            record.transfer.durableBytes = 0
        }
        if let destination = record.destinationPath, let completed = record.fingerprint {
            // The file at its name now is the one its runs may replace (a completed download run again replaces its
            // changed file), and no other: one that appears there later, while it runs or is paused, is someone
            // else's (`DownloadJob.ownFileAtStart()`).
            let identity = FileFingerprint.of(path: destination)?.identity ?? FileFingerprint.nothingThere
            if identity != completed.identity {
                // Another file, even of the same size and time (`cp -p`): never taken for the one completed unread.
                record.fingerprint?.modified = 0
                record.fingerprint?.identity = identity
            }
        }
        record.state = .queued
        record.updatedAt = Date()
        records[id] = record
        // The lifecycle queues it again at once (before the store is awaited): a call meanwhile sees it queued. The
        // write is `queued` with the transfer columns in one transaction: a start meanwhile claims it from the store,
        // which must not say `completed` once this write is in (see `claimRefused`), and a pause meanwhile is written
        // after it, never overwritten by it.
        let report = lifecycle.reopen(id)
        do {
            try await store.saveLifecycleAndTransfers(lifecycle: [record], transfers: [record])
        } catch {
            configuration.logger.error("cannot record a changed file", metadata: ["download": "\(id)"])
        }
        if let how {
            let sameSize =
                FileSystem.entry(at: record.destinationPath ?? "")
                == .regularFile(
                    size: record.fingerprint?.size ?? -1)
            let action: DownloadEvent.FileChangeAction =
                resumed
                ? .resumingFromItsBytes
                : sameSize && record.fingerprint?.sha256 != nil
                    && record.options.checksum == nil ? .checkingItsBytes : .fetchingAgain
            configuration.logger.notice(
                "a completed file changed; fetching it again", metadata: ["download": "\(id)", "how": "\(how)"])
            hub.yield(id, .fileChanged(how: how, action: action))
        }
        // What it is now (queued, or paused meanwhile), said.
        await perform(report)
        return .reopened
    }

    /// What ``checkCompletedFile(_:newChecksum:)`` did with a download.
    enum CompletedFileCheck {
        /// Nothing: it is not completed, or its file is as Haul left it.
        case complete
        /// Queued again, to read its file, ask the server or fetch it again.
        case reopened
        /// Failed: its changed file is kept as it is, or something is in the way (it must not be resumed).
        case refused
    }

    func describe(_ comparison: FileFingerprint.Comparison, of record: DownloadRecord) -> String {
        if let fingerprint = record.fingerprint { return fingerprint.describe(comparison) }
        let size = record.transfer.totalBytes ?? 0
        return FileFingerprint(size: size, modified: 0, identity: "", sha256: nil).describe(comparison)
    }
}

extension DownloadManager {
    /// Reads the files of completed downloads back whole and compares their SHA-256 with the one recorded when
    /// they completed (in the order of `ids`; downloads not completed are reported as such). A file whose time or
    /// identity changed but whose bytes did not takes a new fingerprint, so it is no longer shown as changed.
    ///
    /// Throws ``DownloadError/Code/unknownDownload`` before reading anything if an id is unknown.
    public func verify(_ ids: [DownloadID]) async throws(DownloadError) -> [FileVerification] {
        for id in ids { _ = try await existing(id) }
        var results: [FileVerification] = []
        for id in ids {
            guard let record = records[id] else { continue }
            var verification = FileVerification(
                id: id, file: record.destinationPath.map { URL(fileURLWithPath: $0, isDirectory: false) },
                expected: record.fingerprint?.sha256, result: .notCompleted(record.state))
            guard record.state == .completed, let path = record.destinationPath else {
                results.append(verification)
                continue
            }
            guard case .regularFile(let size) = FileSystem.entry(at: path) else {
                verification.result = .missing(describe(fileComparison(of: record), of: record))
                results.append(verification)
                continue
            }
            guard let expected = record.fingerprint?.sha256 else {
                verification.result = .noDigest(
                    sizeMatches: size == (record.fingerprint?.size ?? record.transfer.totalBytes))
                results.append(verification)
                continue
            }
            do {
                let (read, _) = try await FileDigest.read(path)
                if read.sha256 == expected {
                    verification.result = .matches
                    await refreshFingerprint(of: id, to: read)
                } else {
                    verification.result = .differs(actual: read.sha256 ?? "")
                    if let pieces = record.options.pieces {
                        verification.badPieces = try? await PieceCheck.badPieces(path, pieces)
                    }
                }
            } catch {
                verification.result = .unreadable(
                    DownloadError.mapping(error, stallTimeout: configuration.stallTimeout))
            }
            results.append(verification)
        }
        return results
    }

    /// Records `fingerprint` (the same bytes, read again) for a completed download whose file's time or identity
    /// changed.
    private func refreshFingerprint(of id: DownloadID, to fingerprint: FileFingerprint) async {
        var fingerprint = fingerprint
        fingerprint.verification = records[id]?.fingerprint?.verification
        guard var record = records[id], record.state == .completed, record.fingerprint != fingerprint else { return }
        record.fingerprint = fingerprint
        records[id] = record
        try? await store.saveLifecycle([record])
    }
}
