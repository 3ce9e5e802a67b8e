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
struct SegmentedTransfer: Sendable {
    /// Stop every connection and restart the download from byte 0.
    struct Restart: Error {
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
    }

    let id: DownloadID
    let url: String
    let validator: ResourceValidator
    let policy: DownloadOptions.ChangePolicy
    let profile: RequestProfile
    let writer: BodyWriter
    let board: SegmentBoard
    let state: TransferState
    let retrier: Retrier
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
        while let (segment, verify) = board.claim() {
            let setback: DownloadError
            do {
                let wrote = try await fetch(segment, verify: verify, opening: &opening)
                board.release(segment.id)
                if wrote { continue }
                // An answer that carried none of the requested bytes waits like a failure: no tight loop.
                setback = .responseTruncated(received: 0, expected: segment.end - segment.next)
            } catch {
                board.release(segment.id)
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                if error is Restart || error is Retrier.GaveUp { throw error }
                let failure = DownloadError.mapping(error, stallTimeout: environment.settings.stallTimeout)
                guard failure.isTransient else { throw failure }
                if index > 0, failure.isRefusal, board.workerChanged(by: 0) > 1 {
                    // The server refuses this extra connection: leave the work to the others.
                    logger.info("dropping a connection", metadata: ["connection": "\(index)", "error": "\(failure)"])
                    return
                }
                setback = failure
            }
            try await retrier.wait(after: .failure(setback), bytes: state.current.received)
        }
    }

    /// Fetches what is left of `segment`; returns whether the answer was any use (bytes written, or the segment was
    /// taken over), false when it carried nothing.
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
            let response = try await environment.session.get(
                url, profile: profile, range: "bytes=\(start)-\(end - 1)", ifRange: validator.ifRange, logger: logger)
            body = try accept(response, start: start, overlap: overlap)
        }

        state.update { $0.activeConnections += 1 }
        defer { state.update { $0.activeConnections -= 1 } }
        var wrote = false
        let ending = try await writer.write(
            body, from: start, overlap: overlap, room: segment.end - segment.next
        ) { count, position in
            wrote = true
            if let failure = state.didReceive(count) { throw failure }
            // The segment's end may have moved closer: another connection took over its second half.
            return board.record(segment.id, through: position)
        }
        switch ending {
        case .mismatch:
            throw Restart(reason: .contentMismatch, detail: "bytes before \(segment.next) differ from the disk")
        case .full:
            // The plan gave this segment's rest to another connection: not the server's doing.
            return true
        case .ended:
            return wrote
        }
    }

    /// The body of a segment response that may be written at `start`; anything else stops the transfer.
    private func accept(_ response: HTTPClientResponse, start: Int64, overlap: Int64) throws -> HTTPClientResponse.Body
    {
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
            return response.body
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
