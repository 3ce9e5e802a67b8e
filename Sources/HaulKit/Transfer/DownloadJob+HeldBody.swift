import AsyncHTTPClient

/// Small files: a whole body held in memory, written by the finishing group (see ``HeldBody``).
extension DownloadJob {
    /// The size of a new file this response brings whole and small enough to hold in memory (``HeldBody``), or nil
    /// to write it to a part file as it comes: nothing of it on disk yet, one connection, no checksum to follow and
    /// no modification time to keep.
    func holdableSize(_ head: ResponseHead, validator: ResourceValidator, offset: Int64) -> Int64? {
        guard offset == 0, state.current.file == nil, board == nil, let total = validator.totalBytes,
            total <= settings.heldBodyLimit, record.options.checksum == nil, record.options.pieces == nil,
            record.options.existingFile != .replaceIfNewer,
            connectionsAllowed == 1 || total < 2 * settings.minimumSegmentSize
        else { return nil }
        if head.status == 206 {
            // Only a range that is the whole file.
            guard let range = head.contentRange.flatMap(ContentRange.init(parsing:)), range.first == 0,
                range.last.map({ $0 + 1 }) == total
            else { return nil }
        }
        return total
    }

    /// Receives the whole body of a small new file into memory; ``finish(follower:)`` hands it to the finishing
    /// group. A body that does not complete is written to its part file first (``spill(_:validator:fresh:)``).
    mutating func receiveHeld(
        _ body: HTTPClientResponse.Body, validator: ResourceValidator, fresh: Bool, contentLength: Int64?,
        part: Int? = nil
    ) async throws -> AttemptResult {
        guard let total = validator.totalBytes else { throw DownloadError.internalError("a held body needs its size") }
        let bytes = HeldBody()
        let state = state
        let ending: BodyWriter.Ending
        do {
            ending = try await writer(bytes).write(body, from: 0, overlap: 0, room: total) { count, position in
                if let failure = state.didReceive(count) { throw failure }
                return total - position
            }
        } catch {
            ledger.abandonPart(part)
            await spill(bytes, validator: validator, fresh: fresh)
            throw error
        }
        if case .ended(let position, _) = ending, position == total {
            ledger.endPart(part, complete: true, end: total)
        } else {
            ledger.abandonPart(part)
        }
        switch ending {
        case .ended(let position, _) where position == total:
            if let source = state.current.source { mirrors.credit(0..<total, to: source) }
            state.update { $0.written = total }
            return .held(bytes, fresh: fresh)
        case .ended(let position, let received):
            await spill(bytes, validator: validator, fresh: fresh)
            if let contentLength, received < contentLength {
                throw DownloadError.responseTruncated(received: received, expected: contentLength)
            }
            return .incomplete(wrote: position > 0)
        case .full:
            await spill(bytes, validator: validator, fresh: fresh)
            throw DownloadError.malformedResponse("the server sent more than the \(total) bytes it announced")
        case .mismatch:
            throw DownloadError.internalError("a held body has no overlap to compare")
        }
    }

    /// Writes what a held body received to its part file, recorded first as any new part file, so a small download
    /// that was cut, stopped or failed continues from those bytes as if they had gone there all along. If that
    /// fails, the download starts again from byte 0.
    mutating func spill(_ bytes: HeldBody, validator: ResourceValidator, fresh: Bool) async {
        let count = Int64(bytes.count)
        guard count > 0 else { return }
        do {
            try await createPartFile(validator, fresh: fresh)
            try state.current.file?.write(bytes.chunks, at: 0)
            state.update {
                $0.written = count
                $0.received = count
            }
        } catch {
            logger.info("could not keep the bytes of a small file", metadata: ["error": "\(error)"])
            state.current.file?.close()
            record.transfer.hasPartData = false
            state.update {
                $0.file = nil
                $0.written = 0
                $0.received = 0
            }
        }
    }
}
