import AsyncHTTPClient
import Foundation

/// The part-file keeper: creating it (recorded first), cutting it back, writing bodies into it, and hashing behind
/// the writer.
extension DownloadJob {
    /// Starts hashing the part file behind the writer (again, after a failed check cut it back). Started once the
    /// body goes to a part file: a small body held in memory is hashed whole when it finishes.
    mutating func startFollower() {
        follower?.cancel()
        ledger.forgetPieces()
        let follower = ChecksumFollower(
            checksum: record.options.checksum?.algorithm, state: state, ledger: ledger, pieces: record.options.pieces,
            clock: settings.tickClock)
        self.follower = Task(executorPreference: TaskPlacement.offLoop) { try await follower.digests() }
    }

    /// Starts the follower unless it runs.
    mutating func followPartFile() {
        if follower == nil { startFollower() }
    }

    /// Records the validators of a fresh copy and gets the part file ready (naming it first when needed). Returns
    /// false when naming kept a file already there instead: nothing is to be written.
    mutating func beginPartData(_ validator: ResourceValidator, head: ResponseHead, url: URL?) async throws -> Bool {
        guard case .named(let fresh) = try await nameIfNeeded(head: head, url: url) else { return false }
        try await createPartFile(validator, fresh: fresh)
        return true
    }

    /// name was reserved now, so nothing is at the part path.
    mutating func createPartFile(_ validator: ResourceValidator, fresh: Bool) async throws {
        guard let partPath = record.partPath, let destination = record.destinationPath else {
            throw DownloadError.internalError("download \(id) has no destination")
        }
        record.transfer.record(validator)
        record.transfer.hasPartData = true
        record.transfer.durableBytes = 0
        record.transfer.bootID = BootIdentity.current
        record.updatedAt = Date()
        // Recorded first (with the destination), so a crash right after never leaves a part file nobody owns; a
        // recorded part file that is missing counts as empty. Jobs at this step together share the commit.
        try await perform(machine.recordChanged(.newPartFile))
        if state.current.file == nil {
            try FileSystem.createDirectory(FileSystem.parent(of: destination))
            // A new part file is created exclusively. One already there without validators of ours is never
            // trusted: it is emptied, unless another download (here or in another process) holds it.
            let leftover = !fresh && FileSystem.entry(at: partPath) != .none
            let file = try PartFile(path: partPath, mode: leftover ? .reuseLeftover : .createNew)
            state.update { $0.file = file }
        }
    }

    /// Cuts the part file back to `offset` and starts a new generation, so no older checkpoint or hash applies.
    mutating func rewind(to offset: Int64, because reason: RestartReason?) async throws(DownloadError) {
        if board != nil || record.transfer.segments != nil { try dropSegments() }
        let generation = state.update {
            $0.generation += 1
            $0.written = offset
            $0.received = offset
            $0.finished = false
            return $0.generation
        }
        try state.current.file?.truncate(to: offset)
        record.transfer.generation = generation
        record.transfer.durableBytes = min(record.transfer.durableBytes, offset)
        if offset == 0 {
            record.transfer.hasPartData = false
            ledger.reset()
            mirrors.forgetServedBytes()
        }
        record.updatedAt = Date()
        try await perform(machine.recordChanged(.rewound(toStart: offset == 0)))
        if let reason {
            environment.events.yield(id, .restarted(reason))
        }
    }

    func writer(_ sink: any BodySink) -> BodyWriter {
        BodyWriter(
            sink: sink, state: state, limiter: limiter, globalLimiter: environment.globalLimiter,
            hostLimiter: hostLimiter, settings: settings,
            stopwatch: stopwatch, monitor: monitorLauncher, watchdog: environment.session.transport.watchdog)
    }

    /// Streams `body` into the part file from `offset`, first comparing `overlap` bytes with what is on disk.
    ///
    /// `endsTheFile` is false for a bounded range of a file of unknown size: its end is not the file's end.
    mutating func receive(
        _ body: HTTPClientResponse.Body, from offset: Int64, verifying overlap: Int64, contentLength: Int64?,
        endsTheFile: Bool, part: Int? = nil
    ) async throws -> AttemptResult {
        guard let file = state.current.file else { throw DownloadError.internalError("no part file for \(id)") }
        followPartFile()
        let total = record.transfer.totalBytes
        let start = offset + overlap
        let state = state
        let ending: BodyWriter.Ending
        do {
            ending = try await writer(file).write(
                body, from: offset, overlap: overlap, room: total.map { $0 - start } ?? .max
            ) { count, position in
                if let failure = state.didWrite(count, through: position) { throw failure }
                return total.map { $0 - position } ?? .max
            }
        } catch {
            ledger.abandonPart(part)
            throw error
        }
        if case .ended(let position, let received) = ending {
            ledger.endPart(part, complete: contentLength.map { received >= $0 } ?? true, end: position)
            if let source = state.current.source { mirrors.credit(start..<max(start, position), to: source) }
        } else {
            ledger.abandonPart(part)
        }
        switch ending {
        case .mismatch:
            logger.info("bytes before the resume point differ from the disk; starting over")
            try await rewind(to: 0, because: .contentMismatch)
            return .refetch(.contentMismatch, detail: "the bytes before the resume point differ from the disk")
        case .full:
            throw DownloadError.malformedResponse("the server sent more than the \(total ?? 0) bytes it announced")
        case .ended(let position, let received):
            if let contentLength, received < contentLength {
                throw DownloadError.responseTruncated(received: received, expected: contentLength)
            }
            if received < overlap {
                throw DownloadError.responseTruncated(received: received, expected: overlap)
            }
            if let total {
                return position >= total ? .completed : .incomplete(wrote: position > start)
            }
            guard endsTheFile else { return .incomplete(wrote: position > start) }
            // No length was announced and the body ended cleanly: that is the whole file.
            record.transfer.totalBytes = position
            state.update { $0.total = position }
            return .completed
        }
    }
}
