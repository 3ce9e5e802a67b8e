import AsyncHTTPClient
import Foundation

/// One request: sending it, judging the answer, and routing its body (to a part file, memory, or the plan).
extension DownloadJob {
    mutating func attempt(verifyingOverlap: Bool) async throws -> AttemptResult {
        if let board { return try await runSegmented(board, opening: nil) }
        if let unrequestedEncoding = machine.terms.unrequestedEncoding {
            return try await receiveDecoded(unrequestedEncoding)
        }
        let written = state.current.written
        let overlap = verifyingOverlap ? min(written, settings.resumeOverlap) : 0
        let request = RangeRequest(start: written - overlap, overlap: overlap)
        let bounded = machine.terms.rangesUsable && connectionsAllowed > 1
        let (response, finalURL) = try await send(request, bounded: bounded)
        let head = ResponseHead(response, now: Date())
        if try keptAsNotNewer(head) { return .keptExistingFile }
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
                guard try await beginPartData(validator, head: head, url: finalURL) else { return .keptExistingFile }
            }
            record.transfer.totalBytes = total
            state.update { $0.total = total }
            return .completed
        case .refetchFromStart(let reason, let detail):
            logger.info("restarting", metadata: ["reason": "\(reason)", "detail": "\(detail)"])
            if reason == .rangeMismatch { machine.rangesRefused() }
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
            let finalText = finalURL.absoluteString
            record.transfer.finalURL = finalText
            lastResponseURL = (finalText, finalURL)
            for added in mirrors.add(head.duplicates.filter { $0 != finalText && $0 != record.url }) {
                logger.info("the server names a mirror", metadata: ["mirror": "\(added)"])
            }
            if record.transfer.hasPartData {
                if record.transfer.totalBytes == nil, let total = validator.totalBytes {
                    record.transfer.totalBytes = total
                    try await perform(machine.recordChanged(.sizeLearnt))
                }
            } else if let total = holdableSize(head, validator: validator, offset: offset) {
                guard case .named(let fresh) = try await nameIfNeeded(head: head, url: finalURL, journal: false) else {
                    return .keptExistingFile
                }
                record.transfer.record(validator)
                state.update { $0.total = total }
                return try await receiveHeld(
                    response.body, validator: validator, fresh: fresh, contentLength: head.contentLength, part: part)
            } else if try await !beginPartData(validator, head: head, url: finalURL) {
                return .keptExistingFile
            }
            state.update { $0.total = record.transfer.totalBytes }
            if head.status == 206, record.transfer.totalBytes == nil {
                // A server that does not tell the size (`bytes 0-N/*`) cannot be split: one open range from here on.
                machine.splitRefused()
            }
            if restart == nil, overlap == 0, head.status == 206, connectionsAllowed > 1,
                let total = record.transfer.totalBytes,
                total - offset >= 2 * settings.minimumSegmentSize
            {
                let board = try await startSegments(total: total, done: offset)
                let end = head.contentRange.flatMap(ContentRange.init(parsing:))?.last.map { $0 + 1 } ?? total
                return try await runSegmented(
                    board,
                    opening: .init(
                        body: response.body, start: offset, end: end, part: part,
                        source: state.current.source ?? record.url))
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
        guard try await beginPartData(validator, head: head, url: finalURL) else { return .keptExistingFile }
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
        let (url, generation, home) = target.current
        state.update {
            $0.activeConnections = 1
            $0.source = url
        }
        machine.requested(generation: generation)
        var profile = requestProfile
        if let existingModified = machine.expectations.existingModified, request.start == 0 {
            profile.custom.append(HTTPHeaderField(name: "If-Modified-Since", value: HTTPDate.format(existingModified)))
        }
        return try await environment.session.get(
            url, home: home, profile: profile,
            range: machine.terms.rangesUsable ? "bytes=\(request.start)-\(last)" : nil,
            ifRange: machine.terms.rangesUsable && request.start > 0 ? record.transfer.validator?.ifRange : nil,
            decoding: decoding,
            logger: logger)
    }
}
