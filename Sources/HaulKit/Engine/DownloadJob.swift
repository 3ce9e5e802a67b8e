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

    /// How one request ended, when it did not throw.
    private enum AttemptResult {
        case completed
        /// The body ended cleanly before the end of the file (a server that sends shorter ranges).
        case incomplete
        /// The partial data was discarded; fetch again from byte 0.
        case refetch(RestartReason)
    }

    private(set) var record: DownloadRecord
    let state: TransferState
    let limiter: RateLimiter
    let environment: JobEnvironment
    private var rangesUsable = true
    /// The plan while the download runs over several connections.
    private var board: SegmentBoard?

    init(record: DownloadRecord, state: TransferState, limiter: RateLimiter, environment: JobEnvironment) {
        self.record = record
        self.state = state
        self.limiter = limiter
        self.environment = environment
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
        let monitor = JobMonitor(id: id, state: state, environment: environment)
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
            // Checkpoint what is there, so a resume starts from all of it.
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
            final.durableBytes = refreshed.durableBytes
            final.bootID = refreshed.bootID
            final.segments = refreshed.segments
        }
        switch outcome {
        case .completed(_, let file): return .completed(final, file: file)
        case .failed(_, let error): return .failed(final, error)
        case .stopped: return .stopped(final)
        }
    }

    private mutating func runAttempts(follower: Task<String, any Error>?) async -> Outcome {
        do {
            if let file = try prepare() { return .completed(record, file: file) }
        } catch {
            return .failed(record, error)
        }
        var failures = 0
        var verifyOverlap = state.current.written > 0 && board == nil
        // Progress means getting further into the file than ever before in this run: a server that cuts every
        // response and cannot resume restarts from 0 each time and must still run out of attempts.
        var furthest = state.current.received
        while true {
            if Task.isCancelled { return .stopped(record) }
            do {
                switch try await attempt(verifyingOverlap: verifyOverlap) {
                case .completed:
                    return .completed(record, file: try await finish(follower: follower))
                case .incomplete:
                    failures = 0
                case .refetch:
                    break
                }
                verifyOverlap = false
            } catch {
                if Task.isCancelled || error is CancellationError { return .stopped(record) }
                let failure = DownloadError.mapping(error, stallTimeout: settings.stallTimeout)
                logger.debug("attempt failed", metadata: ["error": "\(failure)"])
                guard failure.isTransient else { return .failed(record, failure) }
                let reached = state.current.received
                failures = reached > furthest ? 1 : failures + 1
                furthest = max(furthest, reached)
                if failures >= settings.retry.maxAttempts {
                    return .failed(record, failure.givingUp(after: failures))
                }
                let delay = settings.retry.delay(
                    afterFailure: failures, retryAfter: failure.retryAfter, random: Double.random(in: 0...1))
                environment.events.yield(id, .retrying(failure, attempt: failures, delay: delay))
                do {
                    try await settings.clock.sleep(for: delay)
                } catch {
                    return .stopped(record)
                }
                verifyOverlap = false
            }
        }
    }

    // MARK: - Before the first request

    /// Works out how much of the part file can be trusted, and cuts off the rest.
    ///
    /// Returns the destination when an earlier run had already finished and only the rename was left.
    private mutating func prepare() throws(DownloadError) -> URL? {
        state.update {
            $0.generation = record.generation
            $0.total = record.totalBytes
            $0.written = 0
        }
        if record.finalizing, let file = try finishInterruptedFinalization() { return file }
        guard record.hasPartData, let partPath = record.partPath else { return nil }
        if let saved = record.segments, let total = record.totalBytes {
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
        let sameBoot = record.bootID != nil && record.bootID == BootIdentity.current
        var trusted = sameBoot ? partSize : min(partSize, record.durableBytes)
        if let total = record.totalBytes, trusted > total { trusted = 0 }

        let file = try PartFile(path: partPath, truncate: false)
        state.update { $0.file = file }
        if trusted < partSize { try file.truncate(to: trusted) }
        try file.sync()
        record.durableBytes = trusted
        record.bootID = BootIdentity.current
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
        guard FileSystem.entry(at: partPath) == .regularFile(size: total), let journalPath = record.journalPath else {
            return try forgetPartData()
        }
        let journal = try SegmentJournal(path: journalPath)
        let sameBoot = record.bootID != nil && record.bootID == BootIdentity.current
        let fromJournal = sameBoot
            ? journal.read(generation: record.generation).flatMap {
                SegmentPlanner(restoring: $0, total: total, minimumSize: minimum)
            } : nil
        guard let planner = fromJournal ?? SegmentPlanner(restoring: saved, total: total, minimumSize: minimum) else {
            journal.close()
            return try forgetPartData()
        }
        let file = try PartFile(path: partPath, truncate: false)
        try file.sync()
        let verifying = Set(planner.segments.filter { !$0.isDone && $0.written > 0 }.map(\.id))
        let board = SegmentBoard(planner: planner, journal: journal, generation: record.generation, verifying: verifying)
        self.board = board
        state.update {
            $0.file = file
            $0.board = board
            $0.received = planner.receivedBytes
            $0.written = planner.contiguousBytes
        }
        record.segments = planner.segments
        record.durableBytes = planner.contiguousBytes
        record.bootID = BootIdentity.current
        record.updatedAt = Date()
        try environment.store.saveTransfer(record)
        logger.debug("resuming segments", metadata: ["received": "\(planner.receivedBytes)"])
    }

    /// Drops a part file that cannot be trusted; the next response starts it again.
    private mutating func forgetPartData() throws(DownloadError) {
        record.hasPartData = false
        record.segments = nil
        record.durableBytes = 0
        try environment.store.saveTransfer(record)
        if let journal = record.journalPath { try FileSystem.removeFile(journal) }
    }

    private var connectionsAllowed: Int {
        max(1, min(record.options.connections, settings.maxConnectionsPerHost))
    }

    /// Splits the rest of the file among connections: preallocates, syncs what is there, records the plan.
    private mutating func startSegments(total: Int64, done: Int64) throws(DownloadError) -> SegmentBoard {
        guard let file = state.current.file, let journalPath = record.journalPath else {
            throw .internalError("download \(id) has no part file to split")
        }
        try file.preallocate(total)
        try file.sync()
        let planner = SegmentPlanner(
            total: total, done: done, connections: connectionsAllowed, minimumSize: settings.minimumSegmentSize)
        let board = SegmentBoard(planner: planner, journal: try SegmentJournal(path: journalPath), generation: record.generation)
        self.board = board
        state.update {
            $0.board = board
            $0.received = done
        }
        record.segments = planner.segments
        record.durableBytes = done
        record.bootID = BootIdentity.current
        record.updatedAt = Date()
        try environment.store.saveTransfer(record)
        return board
    }

    /// Runs the connections until the plan is done; restarts from byte 0 if any of them saw another version.
    private mutating func runSegmented(_ board: SegmentBoard, opening: SegmentedTransfer.Opening?) async throws
        -> AttemptResult
    {
        guard let file = state.current.file, let validator = record.validator, let total = record.totalBytes else {
            throw DownloadError.internalError("download \(id) lost its plan")
        }
        let headers = requestHeaders
        // Each connection counts itself while it transfers.
        state.update { $0.activeConnections = 0 }
        let transfer = SegmentedTransfer(
            id: id, url: record.url, validator: validator, policy: record.options.onResourceChange,
            headers: { first, last, ifRange in headers.fields(range: "bytes=\(first)-\(last)", ifRange: ifRange) },
            file: file, board: board, state: state, limiter: limiter, environment: environment,
            connections: connectionsAllowed, logger: logger)
        do {
            try await transfer.run(opening: opening)
        } catch let restart as SegmentedTransfer.Restart {
            logger.info("restarting", metadata: ["reason": "\(restart.reason)", "detail": "\(restart.detail)"])
            if restart.reason == .rangeMismatch { rangesUsable = false }
            try rewind(to: 0, because: restart.reason)
            return .refetch(restart.reason)
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
        record.segments = nil
        if let journal = record.journalPath { try FileSystem.removeFile(journal) }
    }

    /// Completes a rename that a previous run had committed to but may not have done.
    private mutating func finishInterruptedFinalization() throws(DownloadError) -> URL? {
        guard let destination = record.destinationPath, let partPath = record.partPath, let total = record.totalBytes
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
        record.finalizing = false
        record.hasPartData = false
        try environment.store.saveTransfer(record)
        return nil
    }

    // MARK: - One request

    private mutating func attempt(verifyingOverlap: Bool) async throws -> AttemptResult {
        if let board { return try await runSegmented(board, opening: nil) }
        let written = state.current.written
        let overlap = verifyingOverlap ? min(written, settings.resumeOverlap) : 0
        let request = RangeRequest(start: written - overlap, overlap: overlap)
        let response = try await send(request)
        let head = ResponseHead(response, now: Date())
        let decision = ResponseEvaluator.evaluate(
            head, request: request, recorded: record.validator, url: record.url,
            policy: record.options.onResourceChange)
        logger.debug(
            "response", metadata: ["status": "\(head.status)", "start": "\(request.start)", "decision": "\(decision)"])

        switch decision {
        case .retry(let error), .fail(let error):
            throw error
        case .alreadyComplete(let total):
            record.totalBytes = total
            state.update { $0.total = total }
            return .completed
        case .refetchFromStart(let reason, let detail):
            logger.info("restarting", metadata: ["reason": "\(reason)", "detail": "\(detail)"])
            if reason == .rangeMismatch { rangesUsable = false }
            try rewind(to: 0, because: reason)
            return .refetch(reason)
        case .write(let offset, let validator, let restart):
            if let restart {
                try rewind(to: 0, because: restart)
            }
            record.finalURL = response.url?.absoluteString ?? record.url
            if record.hasPartData {
                if record.totalBytes == nil, let total = validator.totalBytes {
                    record.totalBytes = total
                    try environment.store.saveTransfer(record)
                }
            } else {
                try await beginPartData(validator, head: head)
            }
            state.update { $0.total = record.totalBytes }
            if restart == nil, overlap == 0, head.status == 206, connectionsAllowed > 1, let total = record.totalBytes,
                total - offset >= 2 * settings.minimumSegmentSize
            {
                let board = try startSegments(total: total, done: offset)
                let end = head.contentRange.flatMap(ContentRange.init(parsing:))?.last.map { $0 + 1 } ?? total
                return try await runSegmented(board, opening: .init(body: response.body, start: offset, end: end))
            }
            return try await receive(
                response.body, from: offset, verifying: restart == nil ? overlap : 0, contentLength: head.contentLength)
        }
    }

    private var requestHeaders: RequestHeaders {
        RequestHeaders(userAgent: settings.userAgent, custom: record.options.headers)
    }

    private func send(_ request: RangeRequest) async throws -> HTTPClientResponse {
        // With several connections, the first request asks for a bounded range: once the size is known the file is
        // split, and an open range would run past the first part and be cut (its bytes in flight wasted).
        let last = connectionsAllowed > 1 ? "\(request.start + 2 * settings.minimumSegmentSize - 1)" : ""
        let headers = requestHeaders.fields(
            range: rangesUsable ? "bytes=\(request.start)-\(last)" : nil,
            ifRange: rangesUsable && request.start > 0 ? record.validator?.ifRange : nil)
        state.update { $0.activeConnections = 1 }
        return try await environment.transport.get(record.url, headers: headers, logger: logger)
    }

    /// Records the validators of a fresh copy and gets the part file ready (naming it first when needed).
    private mutating func beginPartData(_ validator: ResourceValidator, head: ResponseHead) async throws {
        if record.destinationPath == nil {
            guard case .directory(let directory) = record.requestedDestination else {
                throw DownloadError.internalError("download \(id) has no destination")
            }
            let url = URL(string: record.finalURL ?? record.url) ?? URL(string: record.url)!
            let name = FileNamer.name(contentDisposition: head.contentDisposition, url: url)
            record.destinationPath = try await environment.reserveDestination(id, directory.path, name)
        }
        guard let partPath = record.partPath, let destination = record.destinationPath else {
            throw DownloadError.internalError("download \(id) has no destination")
        }
        record.record(validator)
        record.hasPartData = true
        record.durableBytes = 0
        record.bootID = BootIdentity.current
        record.updatedAt = Date()
        // Recorded first (with the destination), so a crash right after never leaves a part file nobody owns; a
        // recorded part file that is missing counts as empty.
        try environment.store.saveTransfer(record)
        if state.current.file == nil {
            try FileSystem.createDirectory(FileSystem.parent(of: destination))
            // A part file that exists without validators of ours is never trusted: start it empty.
            let file = try PartFile(path: partPath, truncate: true)
            state.update { $0.file = file }
        }
    }

    /// Cuts the part file back to `offset` and starts a new generation, so no older checkpoint or hash applies.
    private mutating func rewind(to offset: Int64, because reason: RestartReason?) throws(DownloadError) {
        if board != nil || record.segments != nil { try dropSegments() }
        let generation = state.update {
            $0.generation += 1
            $0.written = offset
            $0.received = offset
            $0.finished = false
            return $0.generation
        }
        try state.current.file?.truncate(to: offset)
        record.generation = generation
        record.durableBytes = min(record.durableBytes, offset)
        if offset == 0 { record.hasPartData = false }
        record.updatedAt = Date()
        try environment.store.saveTransfer(record)
        if let reason {
            environment.events.yield(id, .restarted(reason))
        }
    }

    /// Streams `body` into the part file from `offset`, first comparing `verifying` bytes with what is on disk.
    private mutating func receive(
        _ body: HTTPClientResponse.Body, from offset: Int64, verifying overlap: Int64, contentLength: Int64?
    ) async throws -> AttemptResult {
        guard let file = state.current.file else { throw DownloadError.internalError("no part file for \(id)") }
        let total = record.totalBytes
        var position = offset
        var received: Int64 = 0
        var check = try OverlapCheck(file: file, offset: offset, count: Int(overlap))

        for try await chunk in body {
            var chunk = chunk
            received += Int64(chunk.readableBytes)
            if check.remaining > 0 {
                guard let count = check.consume(&chunk) else {
                    logger.info("bytes before the resume point differ from the disk; starting over")
                    try rewind(to: 0, because: .contentMismatch)
                    return .refetch(.contentMismatch)
                }
                position += Int64(count)
                state.update { $0.transferred += Int64(count) }
                if chunk.readableBytes == 0 { continue }
            }
            let count = chunk.readableBytes
            if let total, position + Int64(count) > total {
                throw DownloadError.malformedResponse("the server sent more than the \(total) bytes it announced")
            }
            try file.write(chunk, at: position)
            position += Int64(count)
            state.didWrite(count, through: position)
            let pause = max(limiter.delay(for: count), environment.globalLimiter.delay(for: count))
            if pause > .zero { try await Task.sleep(for: pause) }
        }

        if let contentLength, received < contentLength {
            throw DownloadError.responseTruncated(received: received, expected: contentLength)
        }
        if check.remaining > 0 {
            throw DownloadError.responseTruncated(received: received, expected: overlap)
        }
        if let total {
            return position >= total ? .completed : .incomplete
        }
        // No length was announced and the body ended cleanly: that is the whole file.
        record.totalBytes = position
        state.update { $0.total = position }
        return .completed
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
        record.totalBytes = total
        record.durableBytes = total
        record.finalizing = true
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
