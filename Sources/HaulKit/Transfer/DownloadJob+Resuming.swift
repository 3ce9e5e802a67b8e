import Foundation

/// Before the first request: how much of the part file to trust, and a rename left unfinished.
extension DownloadJob {
    /// Works out how much of the part file can be trusted, and cuts off the rest.
    ///
    /// Returns true when the download is already complete at its destination: an earlier run had finished and only
    /// the rename was left, or ``DownloadOptions/existingFile`` keeps the file there.
    mutating func prepare() async throws(DownloadError) -> Bool {
        state.update {
            $0.generation = record.transfer.generation
            $0.total = record.transfer.totalBytes
            $0.written = 0
        }
        ownFile = ownFileAtStart()
        if record.transfer.finalizing, try await finishInterruptedFinalization() { return true }
        if let destination = record.destinationPath, FileSystem.entry(at: destination) == .directory {
            // Nothing could ever be put there: say so before fetching anything.
            throw .destinationNotWritable(path: destination, reason: "a directory is there: move it away")
        }
        if !record.transfer.hasPartData, let fingerprint = record.fingerprint, let path = record.destinationPath {
            // Completed before, and run again: its file changed, a new checksum came, or `-N` asks the server.
            if await settleCompletedFile(fingerprint, at: path) { return true }
        } else if !record.transfer.hasPartData, case .file = record.requestedDestination, handedOverAfter == nil,
            try await settleExistingFile()
        {
            return true
        }
        guard record.transfer.hasPartData, let partPath = record.partPath else { return false }
        // A completed file that was cut short and is resumed must end as the same file.
        machine.resumingCompletedFile(sha256: record.fingerprint?.sha256)
        if ResourceValidator.isDecoded(record.transfer.contentEncoding) {
            // Decoded bytes have no byte ranges on the server to resume from: start again.
            try await forgetPartData()
            return false
        }
        if let saved = record.transfer.segments, let total = record.transfer.totalBytes {
            try await restoreSegments(saved, total: total, partPath: partPath)
            return false
        }
        if let journal = record.journalPath { try FileSystem.removeFile(journal) }

        let partSize: Int64
        switch FileSystem.entry(at: partPath) {
        case .regularFile(let size): partSize = size
        case .none:
            // Recorded but never made (a held body's), or deleted, with its directory perhaps: start it anew.
            partSize = 0
            try FileSystem.createDirectory(FileSystem.parent(of: partPath))
        case .symbolicLink:
            throw .destinationNotWritable(path: partPath, reason: "it is a symbolic link, which Haul never follows")
        case .directory, .other:
            throw .destinationNotWritable(path: partPath, reason: "something other than a file is in the way")
        }
        // Same boot: the page cache kept every byte `write` accepted, even if the process died.
        // Another boot: only the bytes synced before the last checkpoint are certain.
        let sameBoot = record.transfer.bootID != nil && record.transfer.bootID == BootIdentity.current
        var trusted = sameBoot ? partSize : min(partSize, record.transfer.durableBytes)
        if let total = record.transfer.totalBytes, trusted > total { trusted = 0 }

        let file = try await PartFile.continuing(partPath)
        state.update { $0.file = file }
        // Its size as opened, not as looked at above: a file deleted in between is made anew, empty, and must not be
        // trusted up to the old size (nor a file cut or grown in between beyond what it holds now).
        let opened = try file.size()
        trusted = min(trusted, opened)
        if trusted < opened { try file.truncate(to: trusted) }
        try file.sync()
        record.transfer.durableBytes = trusted
        record.transfer.bootID = BootIdentity.current
        record.updatedAt = Date()
        try await perform(machine.recordChanged(.partFileTrusted))
        state.update {
            $0.written = trusted
            $0.received = trusted
        }
        logger.debug("resuming", metadata: ["trusted": "\(trusted)", "partSize": "\(partSize)"])
        return false
    }

    /// A completed download run again, its file at `path` of the size it was completed with: returns true when that
    /// file is the download's and nothing need be fetched. A file whose time or identity changed is read: the same
    /// SHA-256 (a file touched or copied back) keeps it. A new checksum is checked against it (a file that fails is
    /// fetched again, and replaced only by one that passes). With ``ExistingFilePolicy/replaceIfNewer`` the server
    /// is then asked whether its copy is newer (`-N`).
    mutating func settleCompletedFile(_ fingerprint: FileFingerprint, at path: String) async -> Bool {
        guard FileSystem.entry(at: path) == .regularFile(size: fingerprint.size) else { return false }
        // A file kept as it was found (`--no-clobber`) is the server's only once fetched: `--overwrite` fetches it.
        if fingerprint.keptNotFetched, record.options.existingFile == .replace { return false }
        let checksum = record.options.checksum
        let checksumSettled = checksum.map { $0.algorithm == .sha256 && $0.hex == fingerprint.sha256 } ?? true
        var read: FileFingerprint?
        let unchanged = fingerprint.compare(withFileAt: path) == .unchanged
        if unchanged, let checksum, checksum.algorithm == .sha256, let sha256 = fingerprint.sha256,
            sha256 != checksum.hex
        {
            // The file Haul wrote, with another SHA-256 than the one given: fetched again without reading it (the
            // manager said so when it was given).
            return false
        }
        if !unchanged || !checksumSettled {
            guard let (now, digests) = try? await FileDigest.read(path, also: checksum.map { [$0.algorithm] } ?? [])
            else { return false }
            if let checksum, digests[checksum.algorithm] != checksum.hex {
                let how = "does not have the \(checksum.algorithm.rawValue) given"
                environment.events.yield(id, .fileChanged(how: how, action: .fetchingAgain))
                return false
            }
            if let sha256 = fingerprint.sha256, now.sha256 != sha256 { return false }
            read = now
        }
        if record.options.existingFile == .replaceIfNewer {
            // Kept unless the server's copy is newer (asked with If-Modified-Since).
            machine.comparingWithExisting(modified: FileSystem.modificationDate(of: path))
            return false
        }
        logger.info("the completed file is as it was", metadata: ["path": "\(path)"])
        keepExisting(path, size: fingerprint.size)
        record.fingerprint = read ?? fingerprint
        if let checksum {
            // It has the checksum given (found above): the file is verified against it now.
            let check = DownloadVerification.Check(
                algorithm: DigestAlgorithm(checksum.algorithm), source: record.options.checksumSource)
            record.fingerprint?.verification = .adding(check, to: fingerprint.verification)
        }
        return true
    }

    /// Applies ``DownloadOptions/existingFile`` to a file already at a destination given as a file, before anything
    /// is fetched: `keep` completes the download with it (returns true), `rename` moves the destination to a free
    /// name, `replace` and `automatic` leave it to be replaced when the download completes.
    mutating func settleExistingFile() async throws(DownloadError) -> Bool {
        guard let destination = record.destinationPath, case .regularFile(let size) = FileSystem.entry(at: destination)
        else { return false }
        switch record.options.existingFile {
        case .automatic, .replace:
            return false
        case .keep:
            keepExisting(destination, size: size)
            return true
        case .replaceIfNewer:
            machine.comparingWithExisting(modified: FileSystem.modificationDate(of: destination))
            return false
        case .rename:
            let directory = FileSystem.parent(of: destination)
            let name = (destination as NSString).lastPathComponent
            record.destinationPath = try await environment.host.reserveDestination(
                id, in: directory, name: name, replacing: false, journal: true)
            record.updatedAt = Date()
            try await perform(machine.recordChanged(.renamed))
            return false
        }
    }

    /// Ends the download with the file already at `path`, fetching nothing.
    mutating func keepExisting(_ path: String, size: Int64) {
        logger.info("keeping the file already there", metadata: ["path": "\(path)"])
        record.destinationPath = path
        record.transfer.totalBytes = size
        record.transfer.durableBytes = size
        // Not read: a change from now on is seen, not whether its bytes were the server's (the digest of a file
        // Haul completed before, unchanged since, is kept).
        var now = FileFingerprint.of(path: path)
        if let old = record.fingerprint, old.compare(withFileAt: path) == .unchanged { now?.sha256 = old.sha256 }
        record.fingerprint = now
        state.update {
            $0.total = size
            $0.written = size
            $0.received = size
        }
    }

    /// Continues a multi-connection plan: the journal's values while the OS boot is the same, else the checkpoint's.
    mutating func restoreSegments(_ saved: [Segment], total: Int64, partPath: String) async throws(DownloadError) {
        let minimum = settings.minimumSegmentSize
        // The plan is recorded before the file is preallocated, so a file still shorter than the total is a crash
        // between the two: the plan says which bytes are real, and the file is extended again.
        guard case .regularFile(let size) = FileSystem.entry(at: partPath), size <= total,
            let journalPath = record.journalPath
        else {
            return try await forgetPartData()
        }
        let journal = try SegmentJournal(path: journalPath)
        let sameBoot = record.transfer.bootID != nil && record.transfer.bootID == BootIdentity.current
        let fromJournal =
            sameBoot
            ? journal.read(generation: record.transfer.generation).flatMap {
                SegmentPlanner(restoring: $0, total: total, minimumSize: minimum)
            } : nil
        guard let planner = fromJournal ?? SegmentPlanner(restoring: saved, total: total, minimumSize: minimum),
            planner.segments.allSatisfy({ $0.start + $0.written <= size })
        else {
            journal.close()
            return try await forgetPartData()
        }
        let file = try await PartFile.continuing(partPath)
        state.update { $0.file = file }
        guard try file.size() == size else {
            // Deleted, cut or grown between the look above and the open: the plan no longer describes it.
            file.close()
            state.update { $0.file = nil }
            journal.close()
            return try await forgetPartData()
        }
        if size < total { try file.preallocate(total) }
        try file.sync()
        let verifying = Set(planner.segments.filter { !$0.isDone && $0.written > 0 }.map(\.id))
        let board = SegmentBoard(
            planner: planner, journal: journal, generation: record.transfer.generation, verifying: verifying)
        state.update {
            $0.board = board
            $0.received = planner.receivedBytes
            $0.written = planner.contiguousBytes
        }
        record.transfer.segments = planner.segments
        record.transfer.durableBytes = planner.contiguousBytes
        record.transfer.bootID = BootIdentity.current
        record.updatedAt = Date()
        try await perform(machine.recordChanged(.partFileTrusted))
        logger.debug("resuming segments", metadata: ["received": "\(planner.receivedBytes)"])
    }

    /// Drops a part file that cannot be trusted; the next response starts it again.
    mutating func forgetPartData() async throws(DownloadError) {
        record.transfer.hasPartData = false
        record.transfer.segments = nil
        record.transfer.durableBytes = 0
        try await perform(machine.recordChanged(.partDataDropped))
        if let journal = record.journalPath { try FileSystem.removeFile(journal) }
    }

    /// The identity of the file at the destination now, if it is the download's own, which it may replace whatever
    /// its options: the file that was at the name of a completed download when it was run again (its file changed,
    /// or it is fetched anew, and replaces what was there, as documented), whose identity its reopened record keeps
    /// (nothing, when the name was free then; a placement that failed leaves a stand-in without an identity); or,
    /// after a run cut short, a small file of the recorded size put in place before its completion was recorded (a
    /// held body's record, with nothing at its part path: a failed placement records its part data dropped). Nil for
    /// anything else: a file there is someone else's, even one put there while the download was paused.
    func ownFileAtStart() -> String? {
        guard let destination = record.destinationPath, let found = FileFingerprint.of(path: destination) else {
            return nil
        }
        if let completed = record.fingerprint, !completed.identity.isEmpty, !completed.keptNotFetched,
            found.identity == completed.identity
        {
            return found.identity
        }
        let transfer = record.transfer
        if transfer.hasPartData, transfer.durableBytes == 0, transfer.segments == nil,
            transfer.totalBytes == found.size, let partPath = record.partPath, FileSystem.entry(at: partPath) == .none
        {
            return found.identity
        }
        return nil
    }

    /// Completes a rename that a previous run had committed to but may not have done; returns whether the file is
    /// complete at its destination.
    mutating func finishInterruptedFinalization() async throws(DownloadError) -> Bool {
        guard let destination = record.destinationPath, let partPath = record.partPath,
            let total = record.transfer.totalBytes
        else { return false }
        // A journal left beside it is of no more use.
        if let journal = record.journalPath { try? FileSystem.removeFile(journal) }
        // The SHA-256 recorded before the rename, if it was (its stand-in fingerprint, which has no identity yet).
        let placing = record.fingerprint.flatMap { $0.identity.isEmpty ? $0 : nil }
        if FileSystem.entry(at: partPath) == .regularFile(size: total) {
            // A file that appeared at the destination meanwhile stays, unless the options replace it (or it holds
            // these very bytes).
            do {
                try await onBlockingPool { [replacing] in
                    try replacing.check(destination, size: total, sha256: placing?.sha256, partPath: partPath)
                }
            } catch let error as DownloadError {
                throw error
            } catch {
                throw .internalError("the blocking thread pool is gone: \(error)")
            }
            try FileSystem.rename(partPath, to: destination)
            FileSystem.syncDirectory(FileSystem.parent(of: destination))
            recordPlaced(placing, at: destination)
            return true
        }
        if FileSystem.entry(at: partPath) == .none, FileSystem.entry(at: destination) == .regularFile(size: total) {
            // Renamed before the crash, as its size says. When a failed placement recorded the SHA-256 of the bytes
            // (a crash leaves none: the finalizing record does not keep it), the file must have it too: a file of
            // the same size put there, its part file deleted, is not taken for the download.
            guard let sha256 = placing?.sha256 else { return true }
            let found = try? await onBlockingPool { try FileDigest.sha256(ofFileAt: destination) }
            if found == sha256 {
                recordPlaced(placing, at: destination)
                return true
            }
            logger.notice(
                "the file at the destination is not the download's; fetching it again",
                metadata: ["path": "\(destination)"])
        }
        // Neither is as it was left: start again.
        record.transfer.finalizing = false
        record.transfer.hasPartData = false
        try await perform(machine.recordChanged(.partDataDropped))
        return false
    }

    /// Records the file now at `destination` as the one placed (not the stand-in, which would read as changed), with
    /// the digests and verification recorded before its rename.
    private mutating func recordPlaced(_ placing: FileFingerprint?, at destination: String) {
        guard let placing, var placed = FileFingerprint.of(path: destination) else { return }
        placed.sha256 = placing.sha256
        placed.verification = placing.verification
        record.fingerprint = placed
    }
}
