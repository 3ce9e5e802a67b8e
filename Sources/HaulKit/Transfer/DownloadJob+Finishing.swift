import Foundation

/// Finishing: verifies, syncs and moves the complete file into place.
extension DownloadJob {
    /// How finishing ended, when it did not throw.
    enum FinishResult {
        case completed
        /// The file was cut back to 0 and is fetched again (a checksum failed with mirrors' bytes in the file).
        case refetch(RestartReason, detail: String)
        /// The held body is to go to the finishing queue, which tells the owner how it ended: the job ends now and
        /// hands it off (``FinishingQueue/handOff(_:to:)``) once its last events are out.
        case handOff(FinishingQueue.Request)
    }

    /// Verifies, syncs and renames the complete part file (or writes the held body: `contents`) into place at the
    /// record's destination.
    mutating func finish(_ contents: TransferMachine.Finishing) async throws -> FinishResult {
        let held: (body: HeldBody, fresh: Bool)? =
            switch contents {
            case .held(let body, let fresh): (body, fresh)
            case .partFile, .keptExistingFile: nil
            }
        guard let partPath = record.partPath, let destination = record.destinationPath,
            held != nil || state.current.file != nil
        else { throw DownloadError.internalError("download \(id) finished without a part file") }
        let total = state.update {
            $0.finished = true
            $0.total = $0.total ?? $0.written
            return $0.written
        }
        if let held {
            return try await finishHeld(held, total: total, partPath: partPath, destination: destination)
        }
        guard let file = state.current.file else {
            throw DownloadError.internalError("download \(id) finished without a part file")
        }
        CrashPoint.reach(CrashPoint.afterLastByte)
        followPartFile()
        var digests = try await follower?.value ?? [:]
        digests = try await repairPieces(
            digests, file: file, total: total, partPath: partPath, destination: destination)
        if let checksum = record.options.checksum, let digest = digests[DigestAlgorithm(checksum.algorithm)],
            digest != checksum.hex
        {
            let reason = "the file failed its \(checksum.algorithm.rawValue) checksum"
            if let refetch = try await refetchWithoutMirrors(because: reason) { return refetch }
            throw try await keepBadFile(file, partPath: partPath, destination: destination) { kept in
                .checksumMismatch(expected: checksum, actual: digest, keptAt: kept)
            }
        }
        if let problem = serverDigestProblem(digests) {
            return try await rejectForServerDigest(problem, file: file, partPath: partPath, destination: destination)
        }
        if let expected = machine.expectations.sha256, let digest = digests[.sha256], digest != expected {
            // The bytes on disk before this run (a completed file cut short, resumed) were not all the file's.
            logger.info("the resumed file differs from the one completed before; starting over")
            try await rewind(to: 0, because: .contentMismatch)
            startFollower()
            return .refetch(.contentMismatch, detail: "the resumed file differs from the one completed before")
        }
        record.fingerprint = FileFingerprint(
            size: total, modified: 0, identity: "", sha256: digests[.sha256], verification: verification(digests))
        // The plan goes, but its journal stays on disk until the file is in place: a crash before the finalizing
        // record is committed resumes from the journal, which says every byte is there, and fetches nothing again.
        let journal = board != nil ? closeSegments() : nil
        if record.options.existingFile == .replaceIfNewer,
            let modified = record.transfer.lastModified.flatMap(HTTPDate.parse)
        {
            // The server's time, kept by the rename: the next `-N` run compares with it.
            try? FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: partPath)
        }
        record.transfer.totalBytes = total
        record.transfer.durableBytes = total
        record.transfer.finalizing = true
        markCompleted()
        await startFinishing(holding: nil)
        // Synced, committed as finalizing, renamed, the directory synced and recorded completed, together with other
        // files finishing now.
        record.fingerprint = try await environment.finishing.finish(
            .init(
                contents: .file(file), record: record, partPath: partPath, destination: destination,
                replacing: replacing))
        file.close()
        state.update { $0.file = nil }
        if let journal { try? FileSystem.removeFile(journal) }
        return .completed
    }

    /// A file that failed a check (`failure`: "the file failed its sha256 checksum") with mirrors' bytes in it: the
    /// mirrors are dropped and the file is fetched again from the primary alone. Nil when no mirror's bytes are in it
    /// (the file itself is not the one expected).
    mutating func refetchWithoutMirrors(because failure: String) async throws(DownloadError) -> FinishResult? {
        let contributors = mirrors.contributors
        guard !contributors.isEmpty else { return nil }
        let reason = "\(failure) with bytes from this mirror in it"
        for (index, url) in contributors where mirrors.drop(index, reason: reason) {
            logger.notice("dropping a mirror", metadata: ["mirror": "\(url)", "reason": "\(reason)"])
            if let address = URL(string: url) { environment.events.yield(id, .mirrorDropped(address, reason: reason)) }
        }
        try await rewind(to: 0, because: .checksumMismatch)
        startFollower()
        return .refetch(.checksumMismatch, detail: "\(failure) with mirrors' bytes in it")
    }

    /// Moves a complete file that failed its checksum aside, to `<destination>.bad` (never to the destination, so
    /// nothing takes it for the file), and returns the error that says where it is (`error`, given that place or
    /// nil). The next run starts over.
    mutating func keepBadFile(
        _ file: PartFile, partPath: String, destination: String, error: (String?) -> DownloadError
    ) async throws(DownloadError) -> DownloadError {
        let bad = destination + ".bad"
        var kept: String? = bad
        do {
            try file.sync()
            try FileSystem.rename(partPath, to: bad)
        } catch {
            logger.warning("could not keep the bad file", metadata: ["error": "\(error)"])
            try? FileSystem.removeFile(partPath)
            kept = nil
        }
        file.close()
        state.update { $0.file = nil }
        try await rewind(to: 0, because: nil)
        return error(kept)
    }

    /// Hands a held body to the finishing group: its record (destination, validators, no synced bytes) is committed
    /// there before its part file is written, synced and renamed.
    mutating func finishHeld(
        _ held: (body: HeldBody, fresh: Bool), total: Int64, partPath: String, destination: String
    ) async throws -> FinishResult {
        let digests = heldDigests(held.body.chunks)
        if let problem = serverDigestProblem(digests) {
            // A small file, never on disk: fetched again if the file changed meanwhile, else failed.
            if let change = await changedOnServer(since: problem.wholeFile ? problem.digest : nil) {
                try await rewind(to: 0, because: .resourceChanged)
                return .refetch(.resourceChanged, detail: "the file changed on the server: \(change)")
            }
            try await rewind(to: 0, because: nil)
            throw DownloadError.serverDigestMismatch(
                problem.what, algorithm: problem.digest.algorithm, header: problem.digest.header,
                expected: problem.digest.hex, actual: problem.actual)
        }
        record.transfer.totalBytes = total
        record.transfer.hasPartData = true
        record.transfer.durableBytes = 0
        record.transfer.bootID = BootIdentity.current
        record.fingerprint = FileFingerprint(
            size: total, modified: 0, identity: "", sha256: digests[.sha256], verification: verification(digests))
        markCompleted()
        let request = FinishingQueue.Request(
            contents: .held(held.body.chunks, fresh: held.fresh), record: record, partPath: partPath,
            destination: destination, replacing: replacing)
        // Its job ends here (its slot is given back as it ends), unless it is the job a failed hand-off was given
        // back to: that one waits for its file, a second failure its retrier's to count.
        if handedOverAfter == nil, environment.host.finishingReceiver != nil { return .handOff(request) }
        await startFinishing(holding: total)
        do {
            record.fingerprint = try await environment.finishing.finish(request)
        } catch {
            // Whatever was committed, nothing of it is trusted: a part file that is there is a recorded one. Recorded
            // so (the next run must not take a file at the destination for the one this placement may have put).
            record.transfer.hasPartData = false
            try? await perform(machine.recordChanged(.partDataDropped))
            state.update {
                $0.finished = false
                $0.written = 0
                $0.received = 0
            }
            throw error
        }
        return .completed
    }

    /// Gives the slot to the next queued download while the finishing group works: no connection is needed now.
    /// `heldBytes`: the size of the body held in memory, nil for an open part file.
    mutating func startFinishing(holding heldBytes: Int64?) async {
        await environment.host.finishingStarts(id, holding: heldBytes)
        machine.slotGivenAway()
    }

    /// Which file found at the destination when the file is put in place may be replaced: any, if the options say
    /// so (`replace`, `-N`'s newer copy, or a file named by the user by default, as `curl -o` does); else only the
    /// download's own (``ownFile``). A file that appeared there while it ran, which it did not see when it picked the
    /// name, is never replaced.
    var replacing: FinishingQueue.Request.Replacing {
        switch record.options.existingFile {
        case .replace, .replaceIfNewer: .any
        case .automatic: if case .file = record.requestedDestination { .any } else { .own(identity: ownFile) }
        case .rename, .keep: .own(identity: ownFile)
        }
    }

    /// Marks the record completed, as the finishing group writes it.
    mutating func markCompleted() {
        record.updatedAt = Date()
        record.state = .completed
        record.completedAt = record.updatedAt
        record.lastError = nil
    }
}
