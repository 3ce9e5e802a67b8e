import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// Runs one download to its end: requests, validates, streams to the part file, retries, resumes, verifies,
/// and moves the finished file into place. Owned by one task; shares only its ``TransferState``.
///
/// See `docs/resume-and-durability.md` for the rules this type implements.
struct DownloadJob {
    /// How a run of the job ended.
    enum Outcome: Sendable {
        /// Its file is at the record's destination.
        case completed(DownloadRecord)
        case failed(DownloadRecord, DownloadError)
        /// Cancelled (pause, remove, shutdown); the partial data is checkpointed.
        case stopped(DownloadRecord)

        var record: DownloadRecord {
            switch self {
            case .completed(let record), .failed(let record, _), .stopped(let record): record
            }
        }
    }

    typealias AttemptResult = TransferMachine.AttemptResult

    /// The name a directory download got is taken by a file that ``ExistingFilePolicy/keep`` keeps: the download
    /// completes with it (the record names it).
    struct KeptExistingFile: Error {}

    var record: DownloadRecord
    let state: TransferState
    let limiter: RateLimiter
    /// The limiter of the download's host (unlimited unless a limit is set); nil without a host.
    let hostLimiter: RateLimiter?
    /// The host its connections count against (the manager's key for it).
    let host: String
    let environment: JobEnvironment
    var rangesUsable = true
    /// False once a `200` replaced a multi-connection plan: the rest of the run uses one connection.
    var segmentsAllowed = true
    /// The connections to the host granted for a split (see ``grantedConnections()``).
    var connectionGrant: Int?
    /// The encoding the server applies unasked, once seen: later attempts go straight to the decoding client.
    var unrequestedEncoding: String?
    /// The plan while the download runs over several connections.
    var board: SegmentBoard? { state.current.board }
    /// The failure policy of this run, shared with every connection and the monitor.
    let retrier: Retrier
    /// How it gives its slot away while its host makes it wait.
    let slot: SlotYield
    let stopwatch: Stopwatch
    /// Starts the progress and checkpoint monitor once the job runs long enough to need it.
    let monitorLauncher: MonitorLauncher
    /// Where requests go: the added URL, or a fresh one after it expired.
    let target: RequestTarget
    /// The other URLs of the file, and which of them still serve it in this run.
    let mirrors: MirrorSet
    /// The modification time of the file a ``ExistingFilePolicy/replaceIfNewer`` download may replace: asked with
    /// `If-Modified-Since`, and compared with the answer's `Last-Modified`.
    var existingModified: Date?
    /// The generation of ``target`` the last one-connection request used.
    var requestedGeneration = 0
    /// The whole body of a small new file, received into memory: the finishing group writes it (see ``HeldBody``).
    /// `fresh`: its name was reserved in this run.
    var held: (body: HeldBody, fresh: Bool)?
    /// Whether it offered its slot to the next download to finish its file (it needs one again before it connects).
    var finishingStarted = false
    /// The SHA-256 the file must have: that of the file completed before, when this run resumes from what is left
    /// of it (a completed file cut short by the user). Nil once the file is fetched from byte 0.
    var expectedSHA256: String?
    /// Hashes the part file behind the writer: the SHA-256 every completed file keeps, and the checksum the file
    /// must match (see ``startFollower()``).
    var follower: Task<[DigestAlgorithm: String], any Error>?
    /// What the server stated about the file and each response's bytes, and what the follower found.
    let ledger: DigestLedger

    init(
        record: DownloadRecord, state: TransferState, limiter: RateLimiter, host: String, hostLimiter: RateLimiter?,
        environment: JobEnvironment
    ) {
        self.record = record
        self.state = state
        self.limiter = limiter
        self.host = host
        self.hostLimiter = hostLimiter
        self.environment = environment
        target = RequestTarget(id: record.downloadID, url: record.url, provider: environment.urlProvider)
        // A set of its own even without mirrors: the download's URL may name some (`Link: rel=duplicate`).
        mirrors = MirrorSet(urls: record.options.mirrors.map(\.absoluteString))
        ledger = DigestLedger(verifies: record.options.serverDigests.verifies)
        let id = record.downloadID
        slot = SlotYield(
            release: { [environment] host, wait in await environment.hostWaitStarts(id, host, wait) },
            reclaim: { [environment] in await environment.slotNeeded(id) })
        retrier = Retrier(
            id: record.downloadID, settings: environment.settings, events: environment.events, target: target,
            slot: slot, startingWith: 0)
        stopwatch = Stopwatch(environment.settings.clock)
        var logger = environment.settings.logger
        logger[metadataKey: "download"] = "\(record.downloadID)"
        self.logger = logger
        monitorLauncher = MonitorLauncher(
            JobMonitor(id: record.downloadID, state: state, environment: environment, retrier: retrier),
            after: environment.settings.progressInterval)
    }

    var id: DownloadID { record.downloadID }

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
    var settings: EngineSettings { environment.settings }
    /// The engine's logger, tagged with the download (made once: tagging copies the handler's metadata).
    let logger: Logger

    // MARK: - Run

    mutating func run() async -> Outcome {
        let outcome = await runAttempts()

        follower?.cancel()
        _ = await follower?.result
        await monitorLauncher.stop()
        if case .completed = outcome {
        } else {
            // Checkpoint what is there, so a resume starts from all of it (never after a failed sync: then only
            // what the last good checkpoint recorded is trusted).
            await monitorLauncher.checkpoint()
            state.current.file?.close()
        }
        board?.close()
        state.update {
            $0.file = nil
            $0.activeConnections = 0
            $0.bytesPerSecond = 0
        }
        var final = outcome.record
        if case .completed = outcome {
            // The last word on its size, even when the monitor never ticked (a small file), and on what it was
            // verified against.
            environment.events.yield(id, .progress(state.progress))
            if let verification = final.fingerprint?.verification {
                let sources = await sourceBytes(total: state.current.total ?? state.current.written)
                environment.events.yield(id, .verified(verification, sources: sources))
            }
        } else if let refreshed = try? await environment.store.fetch(id) {
            // Pick up the checkpointed byte count.
            final.transfer.durableBytes = refreshed.transfer.durableBytes
            final.transfer.bootID = refreshed.transfer.bootID
            final.transfer.segments = refreshed.transfer.segments
        }
        switch outcome {
        case .completed: return .completed(final)
        case .failed(_, let error): return .failed(final, error)
        case .stopped: return .stopped(final)
        }
    }

    /// Runs the ``TransferMachine``: performs each step it names and feeds it how the step ended.
    mutating func runAttempts() async -> Outcome {
        do {
            if try await prepare() { return .completed(record) }
        } catch {
            return .failed(record, error)
        }
        retrier.observe(bytes: state.current.received)
        var machine = TransferMachine(resuming: state.current.written > 0 && board == nil)
        while true {
            switch machine.step {
            case .attempt(let verifyingOverlap):
                if finishingStarted {
                    // Its finishing failed: it connects again only with a slot.
                    await environment.slotNeeded(id)
                    finishingStarted = false
                }
                if Task.isCancelled {
                    machine.cancelled()
                    continue
                }
                if let shortage = spaceShortage() {
                    machine.spaceRanOut(.waitingForSpace(shortage))
                    continue
                }
                do {
                    machine.attemptEnded(try await attempt(verifyingOverlap: verifyingOverlap), missing: missingBytes)
                } catch is KeptExistingFile {
                    return .completed(record)
                } catch let verdict as Retrier.GaveUp {
                    if verdict.error.code == .diskFull {
                        machine.spaceRanOut(verdict.error)
                        continue
                    }
                    // A connection of this download spent the shared budget (unless another source takes over).
                    if await takeOver(after: verdict) { continue }
                    machine.gaveUp(verdict.error)
                } catch {
                    logger.debug("attempt failed", metadata: ["error": "\(error)"])
                    machine.failed(error, cancelled: Task.isCancelled || error is CancellationError)
                }
            case .wait(let setback):
                monitorLauncher.start()
                do {
                    try await retrier.wait(
                        after: setback, bytes: state.current.received, requestedWith: requestedGeneration)
                    machine.waited()
                } catch let verdict as Retrier.GaveUp {
                    if await takeOver(after: verdict) {
                        machine.waited()
                        continue
                    }
                    machine.gaveUp(verdict.error)
                } catch {
                    machine.cancelled()
                }
            case .waitForSpace(let reason):
                switch await waitForSpace(after: reason) {
                case .room: machine.spaceFound()
                case .cancelled: machine.cancelled()
                case .gaveUp(let error): machine.gaveUp(error)
                }
            case .finish:
                do {
                    if let failure = state.failure { throw failure }
                    // The record is taken once `finish` has made it `completed`, so the manager need not write it again.
                    if case .refetch(let reason, let detail) = try await finish() {
                        machine.finishRejected(reason, detail: detail)
                        continue
                    }
                    return .completed(record)
                } catch {
                    machine.failed(error, cancelled: Task.isCancelled || error is CancellationError)
                }
            case .failed(let error):
                return .failed(record, error)
            case .stopped:
                return .stopped(record)
            }
        }
    }

    /// Bytes still missing, for messages (0 when the size is unknown).
    var missingBytes: Int64 {
        let values = state.current
        return max(0, (values.total ?? values.received) - values.received)
    }

    // MARK: - One request

    mutating func attempt(verifyingOverlap: Bool) async throws -> AttemptResult {
        if let board { return try await runSegmented(board, opening: nil) }
        if let unrequestedEncoding { return try await receiveDecoded(unrequestedEncoding) }
        let written = state.current.written
        let overlap = verifyingOverlap ? min(written, settings.resumeOverlap) : 0
        let request = RangeRequest(start: written - overlap, overlap: overlap)
        let bounded = rangesUsable && connectionsAllowed > 1
        let (response, finalURL) = try await send(request, bounded: bounded)
        let head = ResponseHead(response, now: Date())
        if try keptAsNotNewer(head) { throw KeptExistingFile() }
        let decision = ResponseEvaluator.evaluate(
            head, request: request, recorded: record.transfer.validator, url: record.url,
            policy: record.options.onResourceChange)
        logger.debug(
            "response", metadata: ["status": "\(head.status)", "start": "\(request.start)", "decision": "\(decision)"])

        switch decision {
        case .retry(let error), .fail(let error):
            throw error
        case .alreadyComplete(let total):
            if state.current.file == nil {
                // Nothing on disk and nothing to fetch: an empty file (`416 bytes */0`).
                var validator = head.validator
                validator.totalBytes = total
                try await beginPartData(validator, head: head, url: finalURL)
            }
            record.transfer.totalBytes = total
            state.update { $0.total = total }
            return .completed
        case .refetchFromStart(let reason, let detail):
            logger.info("restarting", metadata: ["reason": "\(reason)", "detail": "\(detail)"])
            if reason == .rangeMismatch { rangesUsable = false }
            try await rewind(to: 0, because: reason)
            return .refetch(reason, detail: detail)
        case .write(let offset, let validator, let restart):
            if let restart {
                try retrier.countRestart(restart, detail: "answered with \(head.status)", bytes: state.current.received)
                try await rewind(to: 0, because: restart)
            }
            if let encoding = head.contentEncoding, shouldDecode(encoding, head: head, url: finalURL) {
                return try await receiveDecoded(encoding)
            }
            let part: Int?
            do throws(DigestLedger.Conflict) {
                part = try ledger.note(
                    head.digests, representation: true, bodyStart: offset, length: head.contentLength,
                    generation: state.current.generation, source: finalURL.absoluteString)
            } catch {
                return try await restartForChangedDigest(error)
            }
            record.transfer.finalURL = finalURL.absoluteString
            for added in mirrors.add(head.duplicates.filter { $0 != finalURL.absoluteString && $0 != record.url }) {
                logger.info("the server names a mirror", metadata: ["mirror": "\(added)"])
            }
            if record.transfer.hasPartData {
                if record.transfer.totalBytes == nil, let total = validator.totalBytes {
                    record.transfer.totalBytes = total
                    try await environment.store.saveTransfer(record)
                }
            } else if let total = holdableSize(head, validator: validator, offset: offset) {
                let fresh = try await nameIfNeeded(head: head, url: finalURL, journal: false)
                record.transfer.record(validator)
                state.update { $0.total = total }
                return try await receiveHeld(
                    response.body, validator: validator, fresh: fresh, contentLength: head.contentLength, part: part)
            } else {
                try await beginPartData(validator, head: head, url: finalURL)
            }
            state.update { $0.total = record.transfer.totalBytes }
            if head.status == 206, record.transfer.totalBytes == nil {
                // A server that does not tell the size (`bytes 0-N/*`) cannot be split: one open range from here on.
                segmentsAllowed = false
            }
            if restart == nil, overlap == 0, head.status == 206, connectionsAllowed > 1,
                let total = record.transfer.totalBytes,
                total - offset >= 2 * settings.minimumSegmentSize
            {
                let board = try await startSegments(total: total, done: offset)
                let end = head.contentRange.flatMap(ContentRange.init(parsing:))?.last.map { $0 + 1 } ?? total
                return try await runSegmented(
                    board, opening: .init(body: response.body, start: offset, end: end, part: part))
            }
            // A bounded range of a file whose size the server does not tell ends where we asked, not at the end.
            let endsTheFile = head.status != 206 || !bounded || record.transfer.totalBytes != nil
            return try await receive(
                response.body, from: offset, verifying: restart == nil ? overlap : 0,
                contentLength: head.contentLength, endsTheFile: endsTheFile, part: part)
        }
    }

    /// Writes a `200` that replaced a multi-connection plan: a whole new copy, from byte 0.
    mutating func receiveNewCopy(
        _ response: HTTPClientResponse, head: ResponseHead, validator: ResourceValidator
    )
        async throws -> AttemptResult
    {
        let finalURL = response.url
        if let encoding = head.contentEncoding, shouldDecode(encoding, head: head, url: finalURL) {
            return try await receiveDecoded(encoding)
        }
        record.transfer.finalURL = finalURL?.absoluteString ?? record.url
        try await beginPartData(validator, head: head, url: finalURL)
        state.update { $0.total = record.transfer.totalBytes }
        let part: Int?
        do throws(DigestLedger.Conflict) {
            part = try ledger.note(
                head.digests, representation: true, bodyStart: 0, length: head.contentLength,
                generation: state.current.generation, source: record.transfer.finalURL ?? record.url)
        } catch {
            return try await restartForChangedDigest(error)
        }
        return try await receive(
            response.body, from: 0, verifying: 0, contentLength: head.contentLength, endsTheFile: true, part: part)
    }

    var requestProfile: RequestProfile {
        RequestProfile(
            userAgent: settings.userAgent,
            custom: record.options.headers + (record.options.serverDigests == .ask ? Self.digestWishes : []),
            credentials: record.options.credentials, redirects: record.options.redirects,
            pacing: record.options.requestPacing, slot: slot)
    }

    /// Sends the request of a one-connection attempt. With several connections the first request asks for a
    /// bounded range (`bounded`): once the size is known the file is split, and an open range would run past the
    /// first part and be cut (its bytes in flight wasted).
    /// Requests `request`'s range of the current URL; returns the final response and the URL it came from.
    mutating func send(
        _ request: RangeRequest, bounded: Bool, decoding: Bool = false
    ) async throws
        -> (response: HTTPClientResponse, url: URL)
    {
        let last = bounded ? "\(request.start + 2 * settings.minimumSegmentSize - 1)" : ""
        let (url, generation) = await target.current
        state.update {
            $0.activeConnections = 1
            $0.source = url
        }
        requestedGeneration = generation
        var profile = requestProfile
        if let existingModified, request.start == 0 {
            profile.custom.append(HTTPHeaderField(name: "If-Modified-Since", value: HTTPDate.format(existingModified)))
        }
        return try await environment.session.get(
            url, home: await target.home, profile: profile,
            range: rangesUsable ? "bytes=\(request.start)-\(last)" : nil,
            ifRange: rangesUsable && request.start > 0 ? record.transfer.validator?.ifRange : nil, decoding: decoding,
            logger: logger)
    }

    // MARK: - Writing

    /// Records the validators of a fresh copy and gets the part file ready (naming it first when needed).
    mutating func beginPartData(_ validator: ResourceValidator, head: ResponseHead, url: URL?) async throws {
        let fresh = try await nameIfNeeded(head: head, url: url)
        try await createPartFile(validator, fresh: fresh)
    }

    /// Names the file when it has no destination yet: a free name in its directory, reserved for the download.
    /// Returns whether it was named now (then no part file is beside it: the reservation just looked). `journal`:
    /// false for a body held in memory, which never keeps a segment journal.
    mutating func nameIfNeeded(head: ResponseHead, url: URL?, journal: Bool = true) async throws -> Bool {
        guard record.destinationPath == nil else { return false }
        let requested = record.requestedDestination ?? .directory(environment.settings.downloadDirectory)
        guard case .directory(let directory) = requested else {
            throw DownloadError.internalError("download \(id) has no destination")
        }
        let url = url ?? URL(string: record.transfer.finalURL ?? record.url) ?? URL(string: record.url)!
        let name = FileNamer.name(contentDisposition: head.contentDisposition, url: url)
        let policy = record.options.existingFile
        let directoryPath = environment.path(of: directory)
        // Only these policies care what is there already; otherwise the reservation picks a free name.
        if policy == .keep || policy == .replaceIfNewer,
            case let named = FileSystem.child(name, of: directoryPath),
            case .regularFile(let size) = FileSystem.entry(at: named)
        {
            if policy == .keep {
                keepExisting(named, size: size)
                throw KeptExistingFile()
            }
            if policy == .replaceIfNewer, let modified = FileSystem.modificationDate(of: named),
                !Self.isNewer(head.lastModified, than: modified)
            {
                keepExisting(named, size: size)
                throw KeptExistingFile()
            }
        }
        record.destinationPath = try await environment.reserveDestination(
            id, directoryPath, name, policy == .replace || policy == .replaceIfNewer, journal)
        return true
    }

    /// Commits the record of a new part file (destination and validators), then creates the file. `fresh`: the
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
        try await environment.recorder.save(record)
        if state.current.file == nil {
            try FileSystem.createDirectory(FileSystem.parent(of: destination))
            // A new part file is created exclusively. One already there without validators of ours is never
            // trusted: it is emptied, unless another download (here or in another process) holds it.
            let leftover = !fresh && FileSystem.entry(at: partPath) != .none
            let file = try PartFile(path: partPath, mode: leftover ? .reuseLeftover : .createNew)
            state.update { $0.file = file }
        }
    }

    /// For ``ExistingFilePolicy/replaceIfNewer`` with a file at the destination: keeps the file, and returns true,
    /// when the answer says the server's copy is not newer (`304`, or a `Last-Modified` not after the file's time);
    /// false to go on.
    mutating func keptAsNotNewer(_ head: ResponseHead) throws(DownloadError) -> Bool {
        guard let existingModified, let destination = record.destinationPath,
            case .regularFile(let size) = FileSystem.entry(at: destination)
        else { return false }
        guard head.status == 304 || !Self.isNewer(head.lastModified, than: existingModified) else { return false }
        keepExisting(destination, size: size)
        return true
    }

    /// Whether `lastModified` (an HTTP date) is after `date`, to the second; a missing or unreadable one counts as
    /// newer (the server does not say, so the file is fetched, as wget does).
    static func isNewer(_ lastModified: String?, than date: Date) -> Bool {
        guard let server = lastModified.flatMap(HTTPDate.parse) else { return true }
        return server.timeIntervalSince1970.rounded(.down) > date.timeIntervalSince1970.rounded(.down)
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
            expectedSHA256 = nil
        }
        record.updatedAt = Date()
        try await environment.store.saveTransfer(record)
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
