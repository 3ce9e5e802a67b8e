import AsyncHTTPClient
import Foundation

/// One stream (``DownloadManager/stream(_:options:progress:into:)``) run by the parts a download's job runs with: its
/// steps decided by a ``TransferMachine``, its waits by a ``Retrier`` with the manager's ``RetryPolicy``, its bodies
/// written by the ``BodyWriter`` (the speed limits, the lowest-speed watch, the overlap check), into a
/// ``StreamSink`` instead of a part file. Responses are judged by the ``ResponseEvaluator`` as a download's are.
///
/// One connection, nothing recorded. A response that breaks off (or falls below the lowest speed) is continued from
/// the bytes already delivered with `Range` and `If-Range`, re-fetching the engine's resume overlap and comparing it
/// with the sink's tail. What a download would answer by starting over from byte 0 fails a stream instead, since the
/// delivered bytes cannot be taken back: another version (a new validator, a new digest, other bytes in the overlap),
/// a `206` for other bytes. A server that ignores ranges and resends the same version is fine: the sink skips what
/// was delivered and compares what it still holds. The checksum, and a digest the server states in its first
/// response, are computed as the bytes pass and checked at the end.
struct StreamRun {
    let url: URL
    let options: DownloadOptions
    let session: HTTPSession
    let settings: EngineSettings
    /// The stream's own speed limit (unlimited without one), the manager's and its host's.
    let limiter: RateLimiter
    let globalLimiter: RateLimiter
    let hostLimiter: RateLimiter?

    /// The validators of the version being delivered, from the first response.
    private var validator: ResourceValidator?
    /// The server sent a content coding unasked: the stream carries the decoded bytes, fetched whole every time.
    private var decoding = false
    /// What the server stated about the whole file, and whether the sink hashes it from byte 0.
    private let ledger: DigestLedger
    private var checksServerDigest = false
    /// The last response, for the ``RemoteFile`` the stream returns.
    private var last: (head: ResponseHead, url: URL)?

    init(
        url: URL, options: DownloadOptions, session: HTTPSession, settings: EngineSettings, limiter: RateLimiter,
        globalLimiter: RateLimiter, hostLimiter: RateLimiter?
    ) {
        self.url = url
        self.options = options
        self.session = session
        self.settings = settings
        self.limiter = limiter
        self.globalLimiter = globalLimiter
        self.hostLimiter = hostLimiter
        ledger = DigestLedger(verifies: options.serverDigests.verifies)
    }

    /// Runs the stream into `consumer`; `progress` is called after each delivery.
    mutating func run(
        progress: @escaping @Sendable (_ delivered: Int64, _ expected: Int64?) -> Void,
        into consumer: (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> RemoteFile {
        try await withoutActuallyEscaping(consumer) { consumer in
            let sink = StreamSink(keep: Int(settings.resumeOverlap), progress: progress, consumer: consumer)
            if let checksum = options.checksum { sink.hash(with: DigestAlgorithm(checksum.algorithm)) }
            return try await run(into: sink)
        }
    }

    /// Performs each step the ``TransferMachine`` names and feeds it how the step ended.
    private mutating func run(into sink: StreamSink) async throws -> RemoteFile {
        // A stream has no id and no observers: its `retrying` events go nowhere (the log says it retries).
        let retrier = Retrier(id: 0, settings: settings, events: Unobserved(), startingWith: 0)
        let stopwatch = Stopwatch(settings.clock)
        var machine = TransferMachine(resuming: false)
        while true {
            switch machine.step {
            case .attempt:
                if Task.isCancelled {
                    machine.cancelled()
                    continue
                }
                do {
                    let result = try await attempt(into: sink, stopwatch: stopwatch)
                    let missing = max(0, (validator?.totalBytes ?? sink.delivered) - sink.delivered)
                    machine.attemptEnded(result, missing: missing)
                } catch {
                    // The consumer's failure is not the network's: it ends the stream as it is, never retried.
                    if let failure = sink.consumerFailure { throw failure }
                    settings.logger.debug("stream attempt failed", metadata: ["error": "\(error)"])
                    machine.failed(error, cancelled: Task.isCancelled || error is CancellationError)
                }
            case .wait(let setback):
                do {
                    switch try await retrier.wait(after: setback, bytes: sink.delivered) {
                    case .again:
                        settings.logger.info("retrying the stream", metadata: ["delivered": "\(sink.delivered)"])
                        machine.waited()
                    case .gaveUp(let error):
                        machine.gaveUp(error)
                    }
                } catch {
                    machine.cancelled()
                }
            case .waitForSpace(let reason):
                // A stream writes no file; a consumer's full disk is the consumer's error, thrown as it is.
                machine.gaveUp(reason)
            case .finish:
                // The bytes were delivered: a digest that disagrees is final, never fetched again.
                try verify(sink)
                return remoteFile()
            case .failed(let error):
                throw error
            case .stopped:
                throw CancellationError()
            }
        }
    }

    /// One request and its body, from the bytes already delivered.
    private mutating func attempt(
        into sink: StreamSink, stopwatch: Stopwatch
    ) async throws
        -> TransferMachine
        .AttemptResult
    {
        let delivered = sink.delivered
        // A decoded body has no byte ranges: it is fetched whole, and the sink skips (and compares) what it delivered.
        let overlap = decoding ? 0 : min(delivered, settings.resumeOverlap)
        let request = RangeRequest(start: decoding ? 0 : delivered - overlap, overlap: overlap)
        let profile = RequestProfile(
            userAgent: settings.userAgent,
            custom: options.headers + (options.serverDigests == .ask ? DownloadJob.digestWishes : []),
            credentials: options.credentials, redirects: options.redirects, pacing: options.requestPacing)
        let (response, finalURL) = try await session.get(
            url.absoluteString, profile: profile, range: request.start > 0 ? "bytes=\(request.start)-" : nil,
            ifRange: request.start > 0 ? validator?.ifRange : nil, decoding: decoding, logger: settings.logger)
        let head = ResponseHead(response, now: Date())
        if !decoding, let encoding = head.contentEncoding,
            ResourceValidator.decodableEncodings.contains(encoding.lowercased()),
            !FileNamer.saysCompressed(url.lastPathComponent)
        {
            // Compressed although identity was asked for: the stream carries the decoded bytes, as a file does.
            settings.logger.info("decoding an unrequested Content-Encoding", metadata: ["encoding": "\(encoding)"])
            decoding = true
            return try await attempt(into: sink, stopwatch: stopwatch)
        }
        let decision = ResponseEvaluator.evaluate(
            head, request: request, recorded: validator, url: url.absoluteString, policy: .restart)
        switch decision {
        case .retry(let error), .fail(let error):
            throw error
        case .alreadyComplete:
            last = (head, finalURL)
            return .completed
        case .refetchFromStart(let reason, let detail):
            guard delivered > 0 else { return .refetch(reason, detail: detail) }
            throw DownloadError.resourceChanged("\(detail); the bytes already written cannot be taken back")
        case .write(let offset, let new, let restart):
            if let restart, delivered > 0, restart != .serverIgnoredRange {
                throw DownloadError.resourceChanged(
                    "the file changed on the server during the stream (\(restart)); the bytes already written "
                        + "cannot be taken back")
            }
            try note(head, new: new, sink: sink)
            last = (head, finalURL)
            // A new copy from byte 0 (same version): the sink skips what it delivered and compares what it holds.
            let verifying = restart == nil ? overlap : 0
            let total = validator?.totalBytes
            sink.expected = total
            let ending = try await writer(sink, stopwatch: stopwatch).write(
                response.body, from: offset, overlap: verifying, room: total.map { $0 - offset - verifying } ?? .max
            ) { _, position in total.map { $0 - position } ?? .max }
            switch ending {
            case .mismatch:
                throw DownloadError.resourceChanged(
                    "the bytes before the resume point differ from those already written, which cannot be taken back")
            case .full:
                throw DownloadError.malformedResponse("the server sent more than the \(total ?? 0) bytes it announced")
            case .ended(let position, let received):
                // The encoded length frames a decoded body: its decoded length is known only at its end.
                if !decoding, let contentLength = head.contentLength, received < contentLength {
                    throw DownloadError.responseTruncated(received: received, expected: contentLength)
                }
                if received < verifying {
                    throw DownloadError.responseTruncated(received: received, expected: verifying)
                }
                guard let total else { return .completed }  // no length announced, and the body ended cleanly
                return position >= total ? .completed : .incomplete(wrote: sink.delivered > delivered)
            }
        }
    }

    /// Takes what a response to be written says: the validators of the first (kept: the evaluator compares each
    /// later one with them), its size, and its digest of the whole file, hashed from byte 0 when it is the first.
    private mutating func note(_ head: ResponseHead, new: ResourceValidator, sink: StreamSink) throws {
        if validator == nil || decoding {
            validator = new
            if decoding {
                validator?.contentEncoding = ResourceValidator.decoded(head.contentEncoding ?? "")
                validator?.totalBytes = nil
            }
        } else if validator?.totalBytes == nil {
            validator?.totalBytes = new.totalBytes
        }
        guard !decoding, ledger.verifies else { return }
        if let conflict = ledger.noteRepresentation(head.digests.representation) {
            throw DownloadError.resourceChanged(
                "the server's \(conflict.now.header) changed during the stream; the bytes already written cannot be "
                    + "taken back")
        }
        if !checksServerDigest, let expected = ledger.representation {
            checksServerDigest = sink.hash(with: expected.algorithm)
        }
    }

    private func writer(_ sink: StreamSink, stopwatch: Stopwatch) -> BodyWriter {
        BodyWriter(
            sink: sink, state: TransferState(.init()), limiter: limiter, globalLimiter: globalLimiter,
            hostLimiter: hostLimiter, settings: settings, stopwatch: stopwatch, monitor: nil,
            watchdog: session.transport.watchdog)
    }

    /// Checks the delivered bytes against the checksum, and the server's digest of the whole file when the sink
    /// hashed them all (not decoded ones: the digest is of the encoded file).
    private func verify(_ sink: StreamSink) throws {
        if let expected = options.checksum, let actual = sink.digest(DigestAlgorithm(expected.algorithm)),
            actual != expected.hex
        {
            throw DownloadError.streamChecksumMismatch(expected: expected, actual: actual)
        }
        if checksServerDigest, !decoding, let expected = ledger.representation,
            let actual = sink.digest(expected.algorithm), actual != expected.hex
        {
            throw DownloadError.streamServerDigestMismatch(
                algorithm: expected.algorithm, header: expected.header, expected: expected.hex, actual: actual)
        }
    }

    private func remoteFile() -> RemoteFile {
        let head = last?.head
        let finalURL = last?.url ?? url
        return RemoteFile(
            url: url, finalURL: finalURL, status: head?.status ?? 200, size: validator?.totalBytes,
            acceptsRanges: head?.status == 206, etag: validator?.etag, lastModified: validator?.lastModified,
            suggestedName: FileNamer.name(contentDisposition: head?.contentDisposition, url: finalURL))
    }
}

/// Where a stream's run reports its events: nowhere, since a stream is no download anyone observes.
private struct Unobserved: DownloadEventSink {
    func yield(_ id: DownloadID, _ change: @autoclosure () -> DownloadEvent.Change) {}
}
