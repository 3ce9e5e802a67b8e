import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// Fetches the segments of a ``SegmentBoard`` over several connections at once into one preallocated part file.
///
/// Every request carries `If-Range` and every `206` is checked against the recorded validators, size and the
/// requested start: a mismatch on any connection stops them all and the download restarts from byte 0, so a file is
/// never mixed from two versions. A connection that the server refuses (503, 429, resets) while others are working
/// gives up its place: the download goes on with fewer connections.
struct SegmentedTransfer: Sendable {
    /// Stop every connection and restart the download from byte 0.
    struct Restart: Error {
        var reason: RestartReason
        var detail: String
    }

    /// The first response, already validated, to use for the segment that starts where it starts.
    struct Opening: Sendable {
        var body: HTTPClientResponse.Body
        var start: Int64
        /// One past its last byte.
        var end: Int64
    }

    let id: DownloadID
    let url: String
    let validator: ResourceValidator
    let policy: DownloadOptions.ChangePolicy
    let headers: @Sendable (_ first: Int64, _ last: Int64, _ ifRange: String?) -> [(String, String)]
    let file: PartFile
    let board: SegmentBoard
    let state: TransferState
    let limiter: RateLimiter
    let environment: JobEnvironment
    let connections: Int
    var logger: Logger

    /// Returns when no segment is left to claim (the caller checks that the plan is complete).
    func run(opening: Opening?) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<connections {
                let first = index == 0 ? opening : nil
                group.addTask { try await worker(index, opening: first) }
            }
            try await group.waitForAll()
        }
    }

    private func worker(_ index: Int, opening: Opening?) async throws {
        board.workerChanged(by: 1)
        defer { board.workerChanged(by: -1) }
        var opening = opening
        var failures = 0
        let settings = environment.settings
        while let (segment, verify) = board.claim() {
            do {
                if try await fetch(segment, verify: verify, opening: &opening) { failures = 0 }
                board.release(segment.id)
            } catch {
                board.release(segment.id)
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                if error is Restart { throw error }
                let failure = DownloadError.mapping(error, stallTimeout: settings.stallTimeout)
                guard failure.isTransient else { throw failure }
                if index > 0, board.workerChanged(by: 0) > 1 {
                    // The server refuses this extra connection: leave the work to the others.
                    logger.info("dropping a connection", metadata: ["connection": "\(index)", "error": "\(failure)"])
                    return
                }
                failures += 1
                if failures >= settings.retry.maxAttempts { throw failure.givingUp(after: failures) }
                let delay = settings.retry.delay(
                    afterFailure: failures, retryAfter: failure.retryAfter, random: Double.random(in: 0...1))
                environment.events.yield(id, .retrying(failure, attempt: failures, delay: delay))
                try await settings.clock.sleep(for: delay)
            }
        }
    }

    /// Fetches what is left of `segment`; returns whether any byte was written.
    private func fetch(_ segment: Segment, verify: Bool, opening: inout Opening?) async throws -> Bool {
        let overlap = verify ? min(segment.written, environment.settings.resumeOverlap) : 0
        let start = segment.next - overlap
        let body: HTTPClientResponse.Body
        if let first = opening, first.start == start {
            body = first.body
            opening = nil
            board.requesting(segment.id, through: first.end)
        } else {
            // At most half of what is left (but not tiny): the rest stays free for an idle connection to take
            // without cutting this request short.
            let minimum = environment.settings.minimumSegmentSize
            var end = min(segment.end, start + max(4 * minimum, (segment.end - start) / 2))
            if segment.end - end < minimum { end = segment.end }  // no tiny last request
            board.requesting(segment.id, through: end)
            let response = try await environment.transport.get(
                url, headers: headers(start, end - 1, validator.ifRange), logger: logger)
            let head = ResponseHead(response, now: Date())
            let decision = ResponseEvaluator.evaluate(
                head, request: RangeRequest(start: start, overlap: overlap), recorded: validator, url: url,
                policy: policy)
            switch decision {
            case .write(let offset, _, nil) where offset == start:
                body = response.body
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

        state.update { $0.activeConnections += 1 }
        defer { state.update { $0.activeConnections -= 1 } }
        var position = start
        var check = try OverlapCheck(file: file, offset: start, count: Int(overlap))
        var allowed = segment.end - segment.next
        var wrote = false
        for try await chunk in body {
            var chunk = chunk
            if check.remaining > 0 {
                guard let count = check.consume(&chunk) else {
                    throw Restart(reason: .contentMismatch, detail: "bytes before \(segment.next) differ from the disk")
                }
                position += Int64(count)
            }
            while chunk.readableBytes > 0 {
                // The segment's end may have moved closer: another connection took over its second half.
                guard allowed > 0 else { return wrote }
                let count = min(chunk.readableBytes, Int(min(allowed, 64 * 1024)))
                let slice = chunk.readSlice(length: count)!
                try file.write(slice, at: position)
                position += Int64(count)
                wrote = true
                allowed = board.record(segment.id, through: position)
                state.didReceive(count)
                let pause = max(limiter.delay(for: count), environment.globalLimiter.delay(for: count))
                if pause > .zero { try await Task.sleep(for: pause) }
            }
        }
        return wrote
    }
}
