import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// Fetches the segments of a ``SegmentBoard`` over several connections at once into one preallocated part file.
///
/// Every request carries `If-Range` and every `206` is checked against the recorded validators, size and the
/// requested start: a mismatch on any connection stops them all and the download restarts from byte 0, so a file is
/// never mixed from two versions. A `200` (the server ignored the range, or `If-Range` saw a new version) is a
/// whole new copy: it stops the others and is handed to the job, which writes it from byte 0 on one connection.
/// A connection that the server refuses (503, 429, refused) before any byte, while others work, gives up its place.
/// Failures are retried through the download's one ``Retrier``, so bytes gained on any segment count as progress.
/// With mirrors, connections other than the first fetch from them once each passed its check (``MirrorSet``); a
/// mirror that fails or differs is dropped and its segment goes back to the plan, without costing the retry budget.
/// A mirror's bytes are never trusted on its word: each range it writes stays provisional (``SegmentBoard``) until
/// the primary has sent the same bytes for both ends of it (the whole range when it is short), and is forgotten
/// otherwise. A mirror that sends another version, shifted bytes or another file of the same length is caught there;
/// one that changes bytes only inside a range is caught by a whole-file checksum, which then fetches the file again
/// from the primary alone (``DownloadJob``).
struct SegmentedTransfer: Sendable {
    /// A mirror failed or served something else: drop it, give its segment to another source.
    struct MirrorRejected: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// The primary failed while confirming a mirror's bytes: the primary's failure, not the mirror's.
    struct ConfirmationFailed: Error {
        var error: any Error
    }

    /// Stop every connection and restart the download from byte 0: thrown by the connection that saw it (so the
    /// others stop), returned by ``run(opening:)``.
    struct Restart: Error, Sendable {
        var reason: RestartReason
        var detail: String
        /// A response that is a complete new copy from byte 0 (a `200`), to be written instead of requesting again.
        var replacement: Replacement?
    }

    /// A `200` answering a segment's request: the new representation, body not yet read.
    struct Replacement: Sendable {
        var response: HTTPClientResponse
        var head: ResponseHead
        var validator: ResourceValidator
    }

    /// The first response, already validated, to use for the segment that starts where it starts.
    struct Opening: Sendable {
        var body: HTTPClientResponse.Body
        var start: Int64
        /// One past its last byte.
        var end: Int64
        /// Its own digest's part in the ``DigestLedger``, if it stated one.
        var part: Int?
        /// The URL it was requested from (before any redirect): its bytes are credited to it, whatever source
        /// requests go to by the time they arrive.
        var source: String
    }

    let id: DownloadID
    /// Where requests go (a fresh URL replaces an expired one for every connection).
    let target: RequestTarget
    let mirrors: MirrorSet
    let validator: ResourceValidator
    let policy: DownloadOptions.ChangePolicy
    let profile: RequestProfile
    let writer: BodyWriter
    let board: SegmentBoard
    let state: TransferState
    let retrier: Retrier
    let environment: JobEnvironment
    let connections: Int
    /// Where each response's digests are noted (the primary's whole-file digest, every response's own).
    let ledger: DigestLedger
    var logger: Logger
    /// `-x auto`: the count is chosen by measurement (``ConnectionTuner``); nil: ``connections`` it is.
    var adaptive: Adaptive?

    /// What `-x auto` needs: the most connections, and how many of `wanted` the host allows now (its share of the
    /// per-host limit, with its backoff).
    struct Adaptive: Sendable {
        var maximum: Int
        var allowed: @Sendable (_ wanted: Int) async -> Int
    }

    /// How a run of the connections ended, when it did not fail.
    enum Ending: Sendable {
        /// No segment is left to claim (the caller checks that the plan is complete).
        case noSegmentLeft
        /// A connection saw another version, or wrong bytes: the download restarts from byte 0 (with the new copy
        /// already arriving, when there is one).
        case restart(Restart)
        /// A connection's wait found the run's retry budget spent: `error` ends the download, unless another source
        /// takes over.
        case gaveUp(DownloadError)
    }

    /// Runs the connections until no segment is left to claim, one of them says the download must restart, or the
    /// retry budget is spent.
    func run(opening: Opening?) async throws -> Ending {
        do {
            try await runConnections(opening: opening)
            return .noSegmentLeft
        } catch let restart as Restart {
            return .restart(restart)
        } catch let verdict as Retrier.GaveUp {
            return .gaveUp(verdict.error)
        }
    }

    private func runConnections(opening: Opening?) async throws {
        // A child task's result: true for a connection, false for a tuning tick.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<connections {
                let first = index == 0 ? opening : nil
                group.addTask {
                    try await worker(index, opening: first)
                    return true
                }
            }
            guard let adaptive else {
                try await group.waitForAll()
                return
            }
            let clock = environment.settings.tickClock
            let stopwatch = Stopwatch(clock)
            var tuner = ConnectionTuner(
                maximum: adaptive.maximum, connections: connections, bytes: state.current.received, at: .zero)
            var working = connections
            if !tuner.settled { group.addTask { await Self.tick(clock) } }
            while let isConnection = try await group.next() {
                if isConnection {
                    working -= 1
                    if working == 0 { group.cancelAll() }  // the plan is done: the tick ends too
                    continue
                }
                guard working > 0 else { continue }
                let wanted = min(tuner.connections * 2, adaptive.maximum)
                let allowed = wanted > tuner.connections ? await adaptive.allowed(wanted) : wanted
                let decision = tuner.measured(bytes: state.current.received, at: stopwatch.elapsed, allowed: allowed)
                switch decision {
                case .measure:
                    break
                case .add(let count, let reason):
                    logger.info("adding connections", metadata: ["connections": "\(count)", "reason": "\(reason)"])
                    environment.events.yield(id, .connections(count, reason: reason))
                    for index in working..<count {
                        group.addTask {
                            try await worker(index, opening: nil)
                            return true
                        }
                    }
                    working = count
                case .settle(let reason):
                    logger.info("connections settled", metadata: ["connections": "\(working)", "reason": "\(reason)"])
                    environment.events.yield(id, .connections(working, reason: reason))
                }
                if !tuner.settled { group.addTask { await Self.tick(clock) } }
            }
        }
    }

    /// Waits one tuning interval (or until cancelled); false: not a connection.
    private static func tick(_ clock: any Clock<Duration>) async -> Bool {
        try? await clock.sleep(for: ConnectionTuner.interval)
        return false
    }

    private func worker(_ index: Int, opening: Opening?) async throws {
        board.workerChanged(by: 1)
        defer { board.workerChanged(by: -1) }
        var opening = opening
        var generation = 0
        while let (segment, verify) = board.claim() {
            let setback: DownloadError
            let source = opening == nil ? mirrors.source(for: index) : .primary
            do {
                let wrote = try await fetch(
                    segment, verify: verify, opening: &opening, generation: &generation, source: source)
                board.release(segment.id)
                if wrote { continue }
                if case .mirror(let mirror, let url, _) = source {
                    drop(mirror, url, reason: "it answered without any of the bytes asked for")
                    continue
                }
                // An answer that carried none of the requested bytes waits like a failure: no tight loop.
                setback = .responseTruncated(received: 0, expected: segment.end - segment.next)
            } catch {
                board.release(segment.id)
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                if error is Restart || error is Retrier.GaveUp { throw error }
                // No room on the disk is no source's fault: the job waits for space (no mirror is dropped for it).
                if let full = error as? DownloadError, full.code == .diskFull { throw full }
                var error = error
                if let failed = error as? ConfirmationFailed {
                    if failed.error is Restart || failed.error is Retrier.GaveUp { throw failed.error }
                    error = failed.error  // the primary's failure: retried as any other
                } else if case .mirror(let mirror, let url, _) = source {
                    // The mirror's fault (or one it shares with the others, which the primary will meet again).
                    let reason =
                        (error as? MirrorRejected)?.reason
                        ?? DownloadError.mapping(error, stallTimeout: environment.settings.stallTimeout).summary
                    drop(mirror, url, reason: reason)
                    continue
                }
                let failure = DownloadError.mapping(error, stallTimeout: environment.settings.stallTimeout)
                let expired = failure.httpStatus.map(RequestTarget.expiryStatuses.contains) ?? false
                guard failure.isTransient || (expired && target.canRefresh) else { throw failure }
                if index > 0, failure.isRefusal, board.workerChanged(by: 0) > 1 {
                    // The server refuses this extra connection: leave the work to the others.
                    logger.info("dropping a connection", metadata: ["connection": "\(index)", "error": "\(failure)"])
                    if adaptive != nil {
                        let left = board.workerChanged(by: 0) - 1
                        environment.events.yield(
                            id, .connections(left, reason: "the server refused a connection (\(failure.summary))"))
                    }
                    return
                }
                setback = failure
            }
            let verdict = try await retrier.wait(
                after: .failure(setback), bytes: state.current.received, requestedWith: generation)
            if case .gaveUp(let final) = verdict { throw Retrier.GaveUp(error: final) }
        }
    }

    /// Fetches what is left of `segment`; returns whether the answer was any use (bytes written, or the segment was
    /// taken over), false when it carried nothing.
    /// Drops a mirror, logging and reporting why once.
    private func drop(_ mirror: Int, _ url: String, reason: String) {
        guard mirrors.drop(mirror, reason: reason) else { return }
        logger.notice("dropping a mirror", metadata: ["mirror": "\(url)", "reason": "\(reason)"])
        if let address = URL(string: url) { environment.events.yield(id, .mirrorDropped(address, reason: reason)) }
    }

    private func fetch(
        _ segment: Segment, verify: Bool, opening: inout Opening?, generation: inout Int, source: MirrorSet.Source
    ) async throws -> Bool {
        let overlap = verify ? min(segment.written, environment.settings.resumeOverlap) : 0
        let start = segment.next - overlap
        let body: HTTPClientResponse.Body
        var part: Int?
        // The URL the bytes came from, read with the request: a fresh URL that replaces an expired one while it is in
        // flight gets the requests after it, not the credit for its bytes. A mirror's bytes are provisional until
        // confirmed.
        let requested: String
        let fromMirror: Int?
        if let first = opening, first.start == start {
            body = first.body
            part = first.part
            requested = first.source
            fromMirror = nil
            opening = nil
            board.requesting(segment.id, through: first.end)
        } else {
            // At most half of what is left (but not tiny): the rest stays free for an idle connection to take
            // without cutting this request short.
            let minimum = environment.settings.minimumSegmentSize
            var end = min(segment.end, start + max(4 * minimum, (segment.end - start) / 2))
            if segment.end - end < minimum { end = segment.end }  // no tiny last request
            let (primary, used, home) = target.current
            switch source {
            case .primary:
                board.requesting(segment.id, through: end)
                generation = used
                requested = primary
                fromMirror = nil
                let response = try await environment.session.get(
                    primary, home: home, profile: profile, range: "bytes=\(start)-\(end - 1)",
                    ifRange: validator.ifRange, logger: logger
                ).response
                let head: ResponseHead
                (body, head) = try accept(response, url: primary, start: start, overlap: overlap)
                part = try noteDigests(head, start: start, source: primary, representation: true)
            case .mirror(let mirror, let url, let needsCheck):
                if needsCheck {
                    try await check(mirror: url, home: home ?? primary)
                    mirrors.admit(mirror)
                }
                board.requesting(segment.id, through: end)
                requested = url
                fromMirror = mirror
                let response = try await environment.session.get(
                    url, home: home ?? primary, profile: profile, range: "bytes=\(start)-\(end - 1)",
                    logger: logger
                ).response
                body = try acceptFromMirror(response, start: start, end: end)
                part = try noteDigests(ResponseHead(response, now: Date()), start: start, source: url)
            }
        }

        state.update { $0.activeConnections += 1 }
        defer { state.update { $0.activeConnections -= 1 } }
        guard let mirror = fromMirror else {
            do {
                return try await write(
                    body, segment: segment, from: start, overlap: overlap, part: part, credit: requested)
            } catch {
                ledger.abandonPart(part)
                throw error
            }
        }
        board.beginProvisional(segment.id)
        do {
            let wrote = try await write(body, segment: segment, from: start, overlap: overlap, mirror: true, part: part)
            try await confirm(segment.id, mirror: mirror)
            return wrote
        } catch {
            ledger.abandonPart(part)
            forgetProvisionalBytes(of: segment.id)
            throw error
        }
    }

    /// Notes a response's digests (its whole-file digest only for the primary's); a whole-file digest that
    /// contradicts an earlier one restarts the download.
    private func noteDigests(
        _ head: ResponseHead, start: Int64, source: String, representation: Bool = false
    ) throws -> Int? {
        let length = head.contentRange.flatMap(ContentRange.init(parsing:)).flatMap { range -> Int64? in
            guard let first = range.first, let last = range.last else { return nil }
            return last - first + 1
        }
        do throws(DigestLedger.Conflict) {
            return try ledger.note(
                head.digests, representation: representation, bodyStart: start, length: length ?? head.contentLength,
                generation: state.current.generation, source: source)
        } catch {
            throw Restart(reason: .resourceChanged, detail: error.description)
        }
    }

    /// Writes a segment's body; returns whether it brought any byte past the compared overlap.
    private func write(
        _ body: HTTPClientResponse.Body, segment: Segment, from start: Int64, overlap: Int64, mirror: Bool = false,
        part: Int? = nil, credit source: String? = nil
    ) async throws -> Bool {
        let ending = try await writer.write(
            body, from: start, overlap: overlap, room: segment.end - segment.next
        ) { count, position in
            if let failure = state.didReceive(count) { throw failure }
            // The segment's end may have moved closer: another connection took over its second half.
            return board.record(segment.id, through: position)
        }
        if case .ended(let position, _) = ending {
            // Complete when it brought every byte its Content-Range announced (else the part knows its end).
            ledger.endPart(part, complete: true, end: position)
        } else {
            ledger.abandonPart(part)
        }
        switch ending {
        case .ended(let position, _), .full(let position):
            if let source { mirrors.credit(start + overlap..<max(start + overlap, position), to: source) }
        case .mismatch:
            break
        }
        switch ending {
        case .mismatch:
            if mirror { throw MirrorRejected(reason: "its bytes before \(segment.next) differ from the file's") }
            throw Restart(reason: .contentMismatch, detail: "bytes before \(segment.next) differ from the disk")
        case .full:
            // The plan gave this segment's rest to another connection: not the server's doing.
            return true
        case .ended(let position, _):
            return position > start + overlap  // bytes written past the compared overlap
        }
    }

    /// Confirms the bytes mirror `mirror` wrote into segment `id`: the primary's bytes for both ends of the range
    /// (its whole when short) must be the same. Seals the range when they are; throws ``MirrorRejected`` when they
    /// differ, ``ConfirmationFailed`` when the primary could not answer.
    private func confirm(_ id: Int, mirror: Int) async throws {
        guard let range = board.provisionalRange(id), !range.isEmpty else { return board.seal(id) }
        let sample = max(1, environment.settings.resumeOverlap)
        let pieces =
            Int64(range.count) <= 2 * sample
            ? [range]
            : [range.lowerBound..<range.lowerBound + sample, range.upperBound - sample..<range.upperBound]
        for piece in pieces {
            let ending: BodyWriter.Ending
            do {
                let (primary, _, home) = target.current
                let response = try await environment.session.get(
                    primary, home: home, profile: profile,
                    range: "bytes=\(piece.lowerBound)-\(piece.upperBound - 1)", ifRange: validator.ifRange,
                    logger: logger
                ).response
                let body = try accept(
                    response, url: primary, start: piece.lowerBound, overlap: Int64(piece.count)
                ).body
                ending = try await writer.write(body, from: piece.lowerBound, overlap: Int64(piece.count), room: 0) {
                    _, _ in 0
                }
            } catch {
                throw ConfirmationFailed(error: error)
            }
            switch ending {
            case .ended(_, let received) where received == Int64(piece.count):
                continue
            case .ended(_, let received):
                throw ConfirmationFailed(
                    error: DownloadError.responseTruncated(received: received, expected: Int64(piece.count)))
            case .full:
                throw ConfirmationFailed(
                    error: DownloadError.malformedResponse("the server sent more than the \(piece.count) bytes asked"))
            case .mismatch:
                throw MirrorRejected(
                    reason: "its bytes \(piece.lowerBound)-\(piece.upperBound - 1) differ from the primary's")
            }
        }
        board.seal(id)
        mirrors.confirmed(range, by: mirror)
    }

    /// Forgets what a mirror wrote into segment `id` and has not been confirmed; the segment goes back to the plan
    /// from its last trusted byte.
    private func forgetProvisionalBytes(of id: Int) {
        let lost = board.rewind(id)
        if lost > 0 { state.update { $0.received -= lost } }
    }

    /// Checks that the mirror at `url` serves this file: the bytes it sends for a range already on disk must be the
    /// same, and its length the file's. Waits (a bounded time) until the first connection has written enough.
    private func check(mirror url: String, home: String) async throws {
        guard let total = validator.totalBytes else {
            throw MirrorRejected(reason: "the file's length is not known, so nothing can be compared")
        }
        let wanted = min(total, environment.settings.resumeOverlap)
        let waited = ContinuousClock.now
        var range = board.writtenRange(length: wanted)
        while range.map({ $0.count < wanted }) ?? true {
            guard waited.duration(to: .now) < environment.settings.stallTimeout else {
                throw MirrorRejected(reason: "nothing was written to compare it with")
            }
            try await Task.sleep(for: .milliseconds(20))
            range = board.writtenRange(length: wanted)
        }
        guard let range else { return }
        let response = try await environment.session.get(
            url, home: home, profile: profile, range: "bytes=\(range.lowerBound)-\(range.upperBound - 1)",
            logger: logger
        ).response
        let body = try acceptFromMirror(response, start: range.lowerBound, end: range.upperBound)
        let ending = try await writer.write(body, from: range.lowerBound, overlap: Int64(range.count), room: 0) {
            _, _ in
            0
        }
        switch ending {
        case .ended(_, let received) where received == Int64(range.count):
            return
        case .ended(_, let received):
            throw MirrorRejected(reason: "it sent \(received) bytes for a \(range.count)-byte check")
        case .mismatch:
            throw MirrorRejected(reason: "its bytes \(range.lowerBound)-\(range.upperBound - 1) differ from the file's")
        case .full:
            throw MirrorRejected(reason: "it sent more than the \(range.count) bytes asked for")
        }
    }

    /// The body of a mirror's answer for `start..<end`: a `206` of this file's length starting at `start`.
    private func acceptFromMirror(
        _ response: HTTPClientResponse, start: Int64, end: Int64
    ) throws
        -> HTTPClientResponse.Body
    {
        let head = ResponseHead(response, now: Date())
        guard head.status == 206 else {
            throw MirrorRejected(reason: "it answered \(head.status) \(head.reason) to a range request")
        }
        guard let text = head.contentRange, let range = ContentRange(parsing: text), range.first == start,
            let last = range.last, last < end
        else {
            throw MirrorRejected(
                reason: "it sent Content-Range '\(head.contentRange ?? "")' for bytes \(start)-\(end - 1)")
        }
        guard let length = range.completeLength, length == validator.totalBytes else {
            throw MirrorRejected(
                reason: "its copy is \(range.completeLength.map(String.init) ?? "an unknown number of") bytes long, "
                    + "not \(validator.totalBytes.map(String.init) ?? "?")")
        }
        return response.body
    }

    /// The body of a segment response that may be written at `start`; anything else stops the transfer.
    private func accept(
        _ response: HTTPClientResponse, url: String, start: Int64, overlap: Int64
    ) throws -> (body: HTTPClientResponse.Body, head: ResponseHead) {
        let head = ResponseHead(response, now: Date())
        if head.status == 200 || head.status == 203 {
            // The whole representation, whatever was asked: a new copy from byte 0 (or a failure by policy).
            var fresh = head.validator
            fresh.totalBytes = head.contentLength
            let change = validator.differs(from: fresh)
            if policy == .fail { throw change.map { DownloadError.resourceChanged($0) } ?? .serverIgnoredRange }
            throw Restart(
                reason: change == nil ? .serverIgnoredRange : .resourceChanged,
                detail: change ?? "a segment request got 200",
                replacement: Replacement(response: response, head: head, validator: fresh))
        }
        let decision = ResponseEvaluator.evaluate(
            head, request: RangeRequest(start: start, overlap: overlap), recorded: validator, url: url, policy: policy)
        switch decision {
        case .write(let offset, _, nil) where offset == start:
            return (response.body, head)
        case .write(_, _, let reason?):
            throw Restart(reason: reason, detail: "a segment request got \(head.status)")
        case .refetchFromStart(let reason, let detail):
            throw Restart(reason: reason, detail: detail)
        case .write, .alreadyComplete:
            throw Restart(reason: .rangeMismatch, detail: "a segment request got \(head.status)")
        case .retry(let error), .fail(let error):
            throw error
        }
    }
}
