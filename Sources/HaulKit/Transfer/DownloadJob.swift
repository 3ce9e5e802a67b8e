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
        case completed(DownloadRecord, file: URL)
        case failed(DownloadRecord, DownloadError)
        /// Cancelled (pause, remove, shutdown); the partial data is checkpointed.
        case stopped(DownloadRecord)

        var record: DownloadRecord {
            switch self {
            case .completed(let record, _), .failed(let record, _), .stopped(let record): record
            }
        }
    }

    private typealias AttemptResult = TransferMachine.AttemptResult

    private(set) var record: DownloadRecord
    let state: TransferState
    let limiter: RateLimiter
    let environment: JobEnvironment
    private var rangesUsable = true
    /// False once a `200` replaced a multi-connection plan: the rest of the run uses one connection.
    private var segmentsAllowed = true
    /// The encoding the server applies unasked, once seen: later attempts go straight to the decoding client.
    private var unrequestedEncoding: String?
    /// The plan while the download runs over several connections.
    private var board: SegmentBoard?
    /// The failure policy of this run, shared with every connection and the monitor.
    private let retrier: Retrier
    private let stopwatch: Stopwatch

    init(record: DownloadRecord, state: TransferState, limiter: RateLimiter, environment: JobEnvironment) {
        self.record = record
        self.state = state
        self.limiter = limiter
        self.environment = environment
        retrier = Retrier(
            id: record.downloadID, settings: environment.settings, events: environment.events, startingWith: 0)
        stopwatch = Stopwatch(environment.settings.clock)
    }

    private var id: DownloadID { record.downloadID }
    private var settings: EngineSettings { environment.settings }
    private var logger: Logger {
        var logger = settings.logger
        logger[metadataKey: "download"] = "\(id)"
        return logger
    }

    // MARK: - Run

    mutating func run() async -> Outcome {
        let monitor = JobMonitor(id: id, state: state, environment: environment, retrier: retrier)
        let monitorTask = Task { await monitor.run() }
        let follower: Task<String, any Error>? = record.options.checksum.map { checksum in
            let follower = ChecksumFollower(algorithm: checksum.algorithm, state: state)
            return Task { try await follower.digest() }
        }

        let outcome = await runAttempts(follower: follower)

        follower?.cancel()
        _ = await follower?.result
        monitorTask.cancel()
        await monitorTask.value
        if case .completed = outcome {
        } else {
            // Checkpoint what is there, so a resume starts from all of it (never after a failed sync: then only
            // what the last good checkpoint recorded is trusted).
            await monitor.checkpoint()
            state.current.file?.close()
        }
        board?.close()
        state.update {
            $0.file = nil
            $0.activeConnections = 0
            $0.bytesPerSecond = 0
        }
        var final = outcome.record
        if case .completed = outcome {} else if let refreshed = try? environment.store.fetch(id) {
            // Pick up the checkpointed byte count.
            final.transfer.durableBytes = refreshed.transfer.durableBytes
            final.transfer.bootID = refreshed.transfer.bootID
            final.transfer.segments = refreshed.transfer.segments
        }
        switch outcome {
        case .completed(_, let file): return .completed(final, file: file)
        case .failed(_, let error): return .failed(final, error)
        case .stopped: return .stopped(final)
        }
    }

    /// Runs the ``TransferMachine``: performs each step it names and feeds it how the step ended.
    private mutating func runAttempts(follower: Task<String, any Error>?) async -> Outcome {
        do {
            if let file = try prepare() { return .completed(record, file: file) }
        } catch {
            return .failed(record, error)
        }
        retrier.observe(bytes: state.current.received)
        var machine = TransferMachine(resuming: state.current.written > 0 && board == nil)
        while true {
            switch machine.step {
            case .attempt(let verifyingOverlap):
                if Task.isCancelled {
                    machine.cancelled()
                    continue
                }
                do {
                    machine.attemptEnded(try await attempt(verifyingOverlap: verifyingOverlap), missing: missingBytes)
                } catch let verdict as Retrier.GaveUp {
                    // A connection of this download spent the shared budget.
                    machine.gaveUp(verdict.error)
                } catch {
                    logger.debug("attempt failed", metadata: ["error": "\(error)"])
                    machine.failed(error, cancelled: Task.isCancelled || error is CancellationError)
                }
            case .wait(let setback):
                do {
                    try await retrier.wait(after: setback, bytes: state.current.received)
                    machine.waited()
                } catch let verdict as Retrier.GaveUp {
                    machine.gaveUp(verdict.error)
                } catch {
                    machine.cancelled()
                }
            case .finish:
                do {
                    if let failure = state.failure { throw failure }
                    return .completed(record, file: try await finish(follower: follower))
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
    private var missingBytes: Int64 {
        let values = state.current
        return max(0, (values.total ?? values.received) - values.received)
    }

    // MARK: - Before the first request

    /// Works out how much of the part file can be trusted, and cuts off the rest.
    ///
    /// Returns the destination when an earlier run had already finished and only the rename was left.
    private mutating func prepare() throws(DownloadError) -> URL? {
        state.update {
            $0.generation = record.transfer.generation
            $0.total = record.transfer.totalBytes
            $0.written = 0
        }
        if record.transfer.finalizing, let file = try finishInterruptedFinalization() { return file }
        guard record.transfer.hasPartData, let partPath = record.partPath else { return nil }
        if ResourceValidator.isDecoded(record.transfer.contentEncoding) {
            // Decoded bytes have no byte ranges on the server to resume from: start again.
            try forgetPartData()
            return nil
        }
        if let saved = record.transfer.segments, let total = record.transfer.totalBytes {
            try restoreSegments(saved, total: total, partPath: partPath)
            return nil
        }
        if let journal = record.journalPath { try FileSystem.removeFile(journal) }

        let partSize: Int64
        switch FileSystem.entry(at: partPath) {
        case .regularFile(let size): partSize = size
        case .none: partSize = 0
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

        let file = try PartFile(path: partPath, mode: .continueExisting)
        state.update { $0.file = file }
        if trusted < partSize { try file.truncate(to: trusted) }
        try file.sync()
        record.transfer.durableBytes = trusted
        record.transfer.bootID = BootIdentity.current
        record.updatedAt = Date()
        try environment.store.saveTransfer(record)
        state.update {
            $0.written = trusted
            $0.received = trusted
        }
        logger.debug("resuming", metadata: ["trusted": "\(trusted)", "partSize": "\(partSize)"])
        return nil
    }

    /// Continues a multi-connection plan: the journal's values while the OS boot is the same, else the checkpoint's.
    private mutating func restoreSegments(_ saved: [Segment], total: Int64, partPath: String) throws(DownloadError) {
        let minimum = settings.minimumSegmentSize
        // The plan is recorded before the file is preallocated, so a file still shorter than the total is a crash
        // between the two: the plan says which bytes are real, and the file is extended again.
        guard case .regularFile(let size) = FileSystem.entry(at: partPath), size <= total,
            let journalPath = record.journalPath
        else {
            return try forgetPartData()
        }
        let journal = try SegmentJournal(path: journalPath)
        let sameBoot = record.transfer.bootID != nil && record.transfer.bootID == BootIdentity.current
        let fromJournal = sameBoot
            ? journal.read(generation: record.transfer.generation).flatMap {
                SegmentPlanner(restoring: $0, total: total, minimumSize: minimum)
            } : nil
        guard let planner = fromJournal ?? SegmentPlanner(restoring: saved, total: total, minimumSize: minimum),
            planner.segments.allSatisfy({ $0.start + $0.written <= size })
        else {
            journal.close()
            return try forgetPartData()
        }
        let file = try PartFile(path: partPath, mode: .continueExisting)
        state.update { $0.file = file }
        if size < total { try file.preallocate(total) }
        try file.sync()
        let verifying = Set(planner.segments.filter { !$0.isDone && $0.written > 0 }.map(\.id))
        let board = SegmentBoard(planner: planner, journal: journal, generation: record.transfer.generation, verifying: verifying)
        self.board = board
        state.update {
            $0.board = board
            $0.received = planner.receivedBytes
            $0.written = planner.contiguousBytes
        }
        record.transfer.segments = planner.segments
        record.transfer.durableBytes = planner.contiguousBytes
        record.transfer.bootID = BootIdentity.current
        record.updatedAt = Date()
        try environment.store.saveTransfer(record)
        logger.debug("resuming segments", metadata: ["received": "\(planner.receivedBytes)"])
    }

    /// Drops a part file that cannot be trusted; the next response starts it again.
    private mutating func forgetPartData() throws(DownloadError) {
        record.transfer.hasPartData = false
        record.transfer.segments = nil
        record.transfer.durableBytes = 0
        try environment.store.saveTransfer(record)
        if let journal = record.journalPath { try FileSystem.removeFile(journal) }
    }

    private var connectionsAllowed: Int {
        guard segmentsAllowed else { return 1 }
        return max(1, min(record.options.connections, settings.maxConnectionsPerHost))
    }

    /// Splits the rest of the file among connections: records the plan, then preallocates.
    ///
    /// The order matters: a part file preallocated to its full size is zero-filled, and only a recorded plan says
    /// which of its bytes are real. A crash between the two leaves a plan and a short file, which the next run
    /// extends; the other order would leave a full-size file that looks complete.
    private mutating func startSegments(total: Int64, done: Int64) throws(DownloadError) -> SegmentBoard {
        guard let file = state.current.file, let journalPath = record.journalPath else {
            throw .internalError("download \(id) has no part file to split")
        }
        // The plan claims the `done` prefix: make it durable first.
        try file.sync()
        let planner = SegmentPlanner(
            total: total, done: done, connections: connectionsAllowed, minimumSize: settings.minimumSegmentSize)
        let board = SegmentBoard(planner: planner, journal: try SegmentJournal(path: journalPath), generation: record.transfer.generation)
        self.board = board
        state.update {
            $0.board = board
            $0.received = done
        }
        record.transfer.segments = planner.segments
        record.transfer.durableBytes = done
        record.transfer.bootID = BootIdentity.current
        record.updatedAt = Date()
        try environment.store.saveTransfer(record)
        try file.preallocate(total)
        CrashPoint.reach(CrashPoint.afterPreallocation)
        return board
    }

    /// Runs the connections until the plan is done; restarts from byte 0 if any of them saw another version.
    private mutating func runSegmented(_ board: SegmentBoard, opening: SegmentedTransfer.Opening?) async throws
        -> AttemptResult
    {
        guard let file = state.current.file, let validator = record.transfer.validator, let total = record.transfer.totalBytes else {
            throw DownloadError.internalError("download \(id) lost its plan")
        }
        let headers = requestHeaders
        // Each connection counts itself while it transfers.
        state.update { $0.activeConnections = 0 }
        let transfer = SegmentedTransfer(
            id: id, url: record.url, validator: validator, policy: record.options.onResourceChange,
            headers: { first, last, ifRange in headers.fields(range: "bytes=\(first)-\(last)", ifRange: ifRange) },
            writer: writer(file), board: board, state: state, retrier: retrier, environment: environment,
            connections: connectionsAllowed, logger: logger)
        do {
            try await transfer.run(opening: opening)
        } catch let restart as SegmentedTransfer.Restart {
            logger.info("restarting", metadata: ["reason": "\(restart.reason)", "detail": "\(restart.detail)"])
            if restart.reason == .rangeMismatch { rangesUsable = false }
            guard let replacement = restart.replacement else {
                try rewind(to: 0, because: restart.reason)
                return .refetch(restart.reason, detail: restart.detail)
            }
            // A whole new copy is already arriving: write it from byte 0 on this one connection.
            try retrier.countRestart(restart.reason, detail: restart.detail, bytes: state.current.received)
            try rewind(to: 0, because: restart.reason)
            segmentsAllowed = false
            return try await receiveNewCopy(replacement.response, head: replacement.head, validator: replacement.validator)
        }
        guard board.plan.isComplete else {
            throw DownloadError.networkFailure("every connection stopped before the file was complete")
        }
        state.update {
            $0.written = total
            $0.received = total
        }
        return .completed
    }

    /// Closes the plan and deletes its journal (the part file is complete, or is being cut back).
    private mutating func dropSegments() throws(DownloadError) {
        board?.close()
        board = nil
        state.update { $0.board = nil }
        record.transfer.segments = nil
        if let journal = record.journalPath { try FileSystem.removeFile(journal) }
    }

    /// Completes a rename that a previous run had committed to but may not have done.
    private mutating func finishInterruptedFinalization() throws(DownloadError) -> URL? {
        guard let destination = record.destinationPath, let partPath = record.partPath, let total = record.transfer.totalBytes
        else { return nil }
        if FileSystem.entry(at: partPath) == .regularFile(size: total) {
            try FileSystem.rename(partPath, to: destination)
            FileSystem.syncDirectory(FileSystem.parent(of: destination))
            return URL(fileURLWithPath: destination, isDirectory: false)
        }
        if FileSystem.entry(at: partPath) == .none, FileSystem.entry(at: destination) == .regularFile(size: total) {
            return URL(fileURLWithPath: destination, isDirectory: false)
        }
        // Neither is as it was left: start again.
        record.transfer.finalizing = false
        record.transfer.hasPartData = false
        try environment.store.saveTransfer(record)
        return nil
    }

    // MARK: - One request

    private mutating func attempt(verifyingOverlap: Bool) async throws -> AttemptResult {
        if let board { return try await runSegmented(board, opening: nil) }
        if let unrequestedEncoding { return try await receiveDecoded(unrequestedEncoding) }
        let written = state.current.written
        let overlap = verifyingOverlap ? min(written, settings.resumeOverlap) : 0
        let request = RangeRequest(start: written - overlap, overlap: overlap)
        let bounded = rangesUsable && connectionsAllowed > 1
        let response = try await send(request, bounded: bounded)
        let head = ResponseHead(response, now: Date())
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
                try await beginPartData(validator, head: head, url: response.url)
            }
            record.transfer.totalBytes = total
            state.update { $0.total = total }
            return .completed
        case .refetchFromStart(let reason, let detail):
            logger.info("restarting", metadata: ["reason": "\(reason)", "detail": "\(detail)"])
            if reason == .rangeMismatch { rangesUsable = false }
            try rewind(to: 0, because: reason)
            return .refetch(reason, detail: detail)
        case .write(let offset, let validator, let restart):
            if let restart {
                try retrier.countRestart(restart, detail: "answered with \(head.status)", bytes: state.current.received)
                try rewind(to: 0, because: restart)
            }
            if let encoding = head.contentEncoding, shouldDecode(encoding, head: head, url: response.url) {
                return try await receiveDecoded(encoding)
            }
            record.transfer.finalURL = response.url?.absoluteString ?? record.url
            if record.transfer.hasPartData {
                if record.transfer.totalBytes == nil, let total = validator.totalBytes {
                    record.transfer.totalBytes = total
                    try environment.store.saveTransfer(record)
                }
            } else {
                try await beginPartData(validator, head: head, url: response.url)
            }
            state.update { $0.total = record.transfer.totalBytes }
            if head.status == 206, record.transfer.totalBytes == nil {
                // A server that does not tell the size (`bytes 0-N/*`) cannot be split: one open range from here on.
                segmentsAllowed = false
            }
            if restart == nil, overlap == 0, head.status == 206, connectionsAllowed > 1, let total = record.transfer.totalBytes,
                total - offset >= 2 * settings.minimumSegmentSize
            {
                let board = try startSegments(total: total, done: offset)
                let end = head.contentRange.flatMap(ContentRange.init(parsing:))?.last.map { $0 + 1 } ?? total
                return try await runSegmented(board, opening: .init(body: response.body, start: offset, end: end))
            }
            // A bounded range of a file whose size the server does not tell ends where we asked, not at the end.
            let endsTheFile = head.status != 206 || !bounded || record.transfer.totalBytes != nil
            return try await receive(
                response.body, from: offset, verifying: restart == nil ? overlap : 0,
                contentLength: head.contentLength, endsTheFile: endsTheFile)
        }
    }

    /// Writes a `200` that replaced a multi-connection plan: a whole new copy, from byte 0.
    private mutating func receiveNewCopy(_ response: HTTPClientResponse, head: ResponseHead, validator: ResourceValidator)
        async throws -> AttemptResult
    {
        if let encoding = head.contentEncoding, shouldDecode(encoding, head: head, url: response.url) {
            return try await receiveDecoded(encoding)
        }
        record.transfer.finalURL = response.url?.absoluteString ?? record.url
        try await beginPartData(validator, head: head, url: response.url)
        state.update { $0.total = record.transfer.totalBytes }
        return try await receive(
            response.body, from: 0, verifying: 0, contentLength: head.contentLength, endsTheFile: true)
    }

    private var requestHeaders: RequestHeaders {
        RequestHeaders(userAgent: settings.userAgent, custom: record.options.headers)
    }

    /// Sends the request of a one-connection attempt. With several connections the first request asks for a
    /// bounded range (`bounded`): once the size is known the file is split, and an open range would run past the
    /// first part and be cut (its bytes in flight wasted).
    private func send(_ request: RangeRequest, bounded: Bool, decoding: Bool = false) async throws
        -> HTTPClientResponse
    {
        let last = bounded ? "\(request.start + 2 * settings.minimumSegmentSize - 1)" : ""
        let headers = requestHeaders.fields(
            range: rangesUsable ? "bytes=\(request.start)-\(last)" : nil,
            ifRange: rangesUsable && request.start > 0 ? record.transfer.validator?.ifRange : nil)
        state.update { $0.activeConnections = 1 }
        return try await environment.transport.get(record.url, headers: headers, decoding: decoding, logger: logger)
    }

    // MARK: - Unrequested compression

    /// Whether a response sent with `encoding` although Haul asked for `identity` is to be decoded: yes for gzip
    /// and deflate, unless the file's name says it is compressed (`.gz`, `.tgz`), where the encoded bytes are the
    /// file people expect.
    private func shouldDecode(_ encoding: String, head: ResponseHead, url: URL?) -> Bool {
        guard ResourceValidator.decodableEncodings.contains(encoding.lowercased()) else { return false }
        let name: String
        if let destination = record.destinationPath {
            name = (destination as NSString).lastPathComponent
        } else {
            name = FileNamer.name(
                contentDisposition: head.contentDisposition,
                url: url ?? URL(string: record.url) ?? URL(fileURLWithPath: "/"))
        }
        return !FileNamer.saysCompressed(name)
    }

    /// Fetches the whole file again through the decoding client and writes the decoded bytes from byte 0.
    ///
    /// Decoded bytes have no byte ranges on the server, so this copy cannot be resumed: a cut restarts it from 0
    /// (through the retry budget), and the record marks its bytes as decoded so a later run starts over too.
    private mutating func receiveDecoded(_ encoding: String) async throws -> AttemptResult {
        logger.info("decoding an unrequested Content-Encoding", metadata: ["encoding": "\(encoding)"])
        unrequestedEncoding = encoding
        rangesUsable = false
        segmentsAllowed = false
        if state.current.written > 0 || record.transfer.hasPartData { try rewind(to: 0, because: nil) }
        let response = try await send(RangeRequest(start: 0, overlap: 0), bounded: false, decoding: true)
        let head = ResponseHead(response, now: Date())
        guard head.status == 200 || head.status == 203 else {
            throw ResponseEvaluator.evaluate(
                head, request: RangeRequest(start: 0, overlap: 0), recorded: nil, url: record.url,
                policy: record.options.onResourceChange
            ).error ?? DownloadError.malformedResponse("a request for the whole file got \(head.status)")
        }
        var validator = head.validator
        validator.contentEncoding = ResourceValidator.decoded(head.contentEncoding ?? encoding)
        validator.totalBytes = nil
        record.transfer.finalURL = response.url?.absoluteString ?? record.url
        try await beginPartData(validator, head: head, url: response.url)
        state.update { $0.total = nil }
        // The encoded length frames the body; the decoded length is known only at its end.
        return try await receive(response.body, from: 0, verifying: 0, contentLength: nil, endsTheFile: true)
    }

    // MARK: - Writing

    /// Records the validators of a fresh copy and gets the part file ready (naming it first when needed).
    private mutating func beginPartData(_ validator: ResourceValidator, head: ResponseHead, url: URL?) async throws {
        if record.destinationPath == nil {
            guard case .directory(let directory) = record.requestedDestination else {
                throw DownloadError.internalError("download \(id) has no destination")
            }
            let url = url ?? URL(string: record.transfer.finalURL ?? record.url) ?? URL(string: record.url)!
            let name = FileNamer.name(contentDisposition: head.contentDisposition, url: url)
            record.destinationPath = try await environment.reserveDestination(id, directory.path, name)
        }
        guard let partPath = record.partPath, let destination = record.destinationPath else {
            throw DownloadError.internalError("download \(id) has no destination")
        }
        record.transfer.record(validator)
        record.transfer.hasPartData = true
        record.transfer.durableBytes = 0
        record.transfer.bootID = BootIdentity.current
        record.updatedAt = Date()
        // Recorded first (with the destination), so a crash right after never leaves a part file nobody owns; a
        // recorded part file that is missing counts as empty.
        try environment.store.saveTransfer(record)
        if state.current.file == nil {
            try FileSystem.createDirectory(FileSystem.parent(of: destination))
            // A new part file is created exclusively. One already there without validators of ours is never
            // trusted: it is emptied, unless another download (here or in another process) holds it.
            let leftover = FileSystem.entry(at: partPath) != .none
            let file = try PartFile(path: partPath, mode: leftover ? .reuseLeftover : .createNew)
            state.update { $0.file = file }
        }
    }

    /// Cuts the part file back to `offset` and starts a new generation, so no older checkpoint or hash applies.
    private mutating func rewind(to offset: Int64, because reason: RestartReason?) throws(DownloadError) {
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
        if offset == 0 { record.transfer.hasPartData = false }
        record.updatedAt = Date()
        try environment.store.saveTransfer(record)
        if let reason {
            environment.events.yield(id, .restarted(reason))
        }
    }

    private func writer(_ file: PartFile) -> BodyWriter {
        BodyWriter(
            file: file, state: state, limiter: limiter, globalLimiter: environment.globalLimiter, settings: settings,
            stopwatch: stopwatch)
    }

    /// Streams `body` into the part file from `offset`, first comparing `overlap` bytes with what is on disk.
    ///
    /// `endsTheFile` is false for a bounded range of a file of unknown size: its end is not the file's end.
    private mutating func receive(
        _ body: HTTPClientResponse.Body, from offset: Int64, verifying overlap: Int64, contentLength: Int64?,
        endsTheFile: Bool
    ) async throws -> AttemptResult {
        guard let file = state.current.file else { throw DownloadError.internalError("no part file for \(id)") }
        let total = record.transfer.totalBytes
        let start = offset + overlap
        let state = state
        let ending = try await writer(file).write(
            body, from: offset, overlap: overlap, room: total.map { $0 - start } ?? .max
        ) { count, position in
            if let failure = state.didWrite(count, through: position) { throw failure }
            return total.map { $0 - position } ?? .max
        }
        switch ending {
        case .mismatch:
            logger.info("bytes before the resume point differ from the disk; starting over")
            try rewind(to: 0, because: .contentMismatch)
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

    // MARK: - Finishing


    /// Verifies, syncs and renames the complete part file into place; returns the destination.
    private mutating func finish(follower: Task<String, any Error>?) async throws -> URL {
        guard let file = state.current.file, let partPath = record.partPath, let destination = record.destinationPath
        else { throw DownloadError.internalError("download \(id) finished without a part file") }
        let total = state.update {
            $0.finished = true
            $0.total = $0.total ?? $0.written
            return $0.written
        }
        if let checksum = record.options.checksum, let follower {
            let digest = try await follower.value
            if digest != checksum.hex {
                try rewind(to: 0, because: nil)
                try FileSystem.removeFile(partPath)
                file.close()
                state.update { $0.file = nil }
                environment.events.yield(id, .restarted(.checksumMismatch))
                throw DownloadError.checksumMismatch(expected: checksum, actual: digest)
            }
        }
        if board != nil { try dropSegments() }
        record.transfer.totalBytes = total
        record.transfer.durableBytes = total
        record.transfer.finalizing = true
        record.updatedAt = Date()
        record.state = .completed
        record.completedAt = record.updatedAt
        record.lastError = nil
        // Synced, committed as finalizing, renamed, the directory synced and recorded completed, together with other
        // files finishing now.
        try await environment.finishing.finish(
            .init(file: file, record: record, partPath: partPath, destination: destination))
        file.close()
        state.update { $0.file = nil }
        return URL(fileURLWithPath: destination, isDirectory: false)
    }
}
