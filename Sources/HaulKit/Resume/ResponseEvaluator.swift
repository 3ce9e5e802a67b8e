import Foundation

/// What to do with a response. Pure: decided from the status, headers, request and recorded validator.
enum ResponseDecision: Sendable, Equatable {
    /// Write the body starting at byte `offset` (the first `overlap` bytes only compared). With `restart`,
    /// discard the partial data first: this body is a complete new copy from byte 0.
    case write(offset: Int64, validator: ResourceValidator, restart: RestartReason?)
    /// The part file already holds the complete file of `totalBytes`.
    case alreadyComplete(totalBytes: Int64)
    /// Ignore this response, discard the partial data, and fetch again from byte 0.
    case refetchFromStart(RestartReason, detail: String)
    /// A transient failure: retry later.
    case retry(DownloadError)
    /// A final failure.
    case fail(DownloadError)
}

extension ResponseDecision {
    /// ``retry(_:)`` or ``fail(_:)`` as `error` says: whether a failure is transient is decided in one place,
    /// ``DownloadError/isTransient``.
    static func rejecting(_ error: DownloadError) -> ResponseDecision {
        error.isTransient ? .retry(error) : .fail(error)
    }

    /// The error of a ``retry(_:)`` or ``fail(_:)`` decision.
    var error: DownloadError? {
        switch self {
        case .retry(let error), .fail(let error): error
        case .write, .alreadyComplete, .refetchFromStart: nil
        }
    }
}

enum ResponseEvaluator {
    /// Decides what `head` means for a download that asked for `request`, knowing `recorded` (nil on a first request).
    static func evaluate(
        _ head: ResponseHead, request: RangeRequest, recorded: ResourceValidator?, url: String,
        policy: DownloadOptions.ChangePolicy
    ) -> ResponseDecision {
        switch head.status {
        case 200, 203:
            var validator = head.validator
            validator.totalBytes = head.contentLength
            guard request.resumePoint > 0 else {
                return .write(offset: 0, validator: validator, restart: nil)
            }
            let changed = recorded.flatMap { $0.differs(from: validator) }
            let reason: RestartReason = changed == nil ? .serverIgnoredRange : .resourceChanged
            if policy == .fail {
                return .rejecting(changed.map { .resourceChanged($0) } ?? .serverIgnoredRange)
            }
            return .write(offset: 0, validator: validator, restart: reason)

        case 206:
            guard let header = head.contentRange, let range = ContentRange(parsing: header), let first = range.first,
                let length = range.length
            else {
                return .refetchFromStart(
                    .rangeMismatch, detail: "206 without a usable Content-Range (\(head.contentRange ?? "none"))")
            }
            var validator = head.validator
            validator.totalBytes = range.completeLength
            if let recorded, let change = recorded.differs(from: validator) {
                return policy == .fail
                    ? .rejecting(.resourceChanged(change)) : .refetchFromStart(.resourceChanged, detail: change)
            }
            if let contentLength = head.contentLength, contentLength != length {
                return .refetchFromStart(
                    .rangeMismatch, detail: "Content-Length \(contentLength) disagrees with Content-Range \(header)")
            }
            guard first == request.start else {
                return .refetchFromStart(.rangeMismatch, detail: "asked for bytes from \(request.start), got \(header)")
            }
            if validator.totalBytes == nil { validator.totalBytes = recorded?.totalBytes }
            return .write(offset: first, validator: validator, restart: nil)

        case 416:
            let stated = head.contentRange.flatMap(ContentRange.init(parsing:))?.completeLength
            if let size = stated, size == request.resumePoint,
                recorded?.totalBytes == nil || recorded?.totalBytes == size
            {
                return .alreadyComplete(totalBytes: size)
            }
            if stated == nil, request.resumePoint > 0, let recorded, recorded.totalBytes == nil, recorded.ifRange != nil
            {
                // The size was never stated, and the range from the resume point of the same version (If-Range held,
                // or the answer would have been 200) is unsatisfiable: the file ends there.
                return .alreadyComplete(totalBytes: request.resumePoint)
            }
            let detail = "416 for bytes from \(request.start) (Content-Range: \(head.contentRange ?? "none"))"
            return policy == .fail
                ? .rejecting(.resourceChanged(detail)) : .refetchFromStart(.resourceChanged, detail: detail)

        case 400...599:
            return .rejecting(.httpStatus(head.status, reason: head.reason, url: url, retryAfter: head.retryAfter))

        default:
            return .rejecting(.malformedResponse("unexpected status \(head.status) \(head.reason) for \(url)"))
        }
    }
}
