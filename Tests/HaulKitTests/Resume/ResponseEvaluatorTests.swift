import Testing

@testable import HaulKit

@Suite("Response decisions")
struct ResponseEvaluatorTests {
    static let etag = "\"v1\""
    static let recorded = ResourceValidator(etag: etag, lastModified: nil, totalBytes: 1000, contentEncoding: nil)

    static func head(_ status: Int, length: Int64? = nil, range: String? = nil, etag: String? = etag) -> ResponseHead {
        ResponseHead(
            status: status, reason: "R", contentLength: length, contentRange: range, etag: etag, lastModified: nil,
            contentEncoding: nil, contentDisposition: nil, retryAfter: nil)
    }

    static let fresh = RangeRequest(start: 0, overlap: 0)
    static let resume = RangeRequest(start: 400, overlap: 100)

    @Test(
        "response decisions",
        arguments: [
            // A fresh request: 200 or 206 from byte 0.
            (
                head(200, length: 1000), fresh, nil,
                .write(offset: 0, validator: .init(etag: etag, totalBytes: 1000), restart: nil)
            ),
            (
                head(206, length: 1000, range: "bytes 0-999/1000"), fresh, nil,
                .write(offset: 0, validator: .init(etag: etag, totalBytes: 1000), restart: nil)
            ),
            // Resuming: the right 206 is written at its start.
            (
                head(206, length: 600, range: "bytes 400-999/1000"), resume, recorded,
                .write(offset: 400, validator: recorded, restart: nil)
            ),
            // 200 to a range request: same version → the server ignores ranges; new version → changed.
            (
                head(200, length: 1000), resume, recorded,
                .write(offset: 0, validator: .init(etag: etag, totalBytes: 1000), restart: .serverIgnoredRange)
            ),
            (
                head(200, length: 1000, etag: "\"v2\""), resume, recorded,
                .write(offset: 0, validator: .init(etag: "\"v2\"", totalBytes: 1000), restart: .resourceChanged)
            ),
            // 206 that does not fit: wrong start, other size, other ETag, no Content-Range, length disagreeing.
            (
                head(206, length: 600, range: "bytes 401-1000/1001"), resume, recorded,
                .refetchFromStart(.resourceChanged, detail: "size 1000 became 1001")
            ),
            (
                head(206, length: 599, range: "bytes 401-999/1000"), resume, recorded,
                .refetchFromStart(.rangeMismatch, detail: "asked for bytes from 400, got bytes 401-999/1000")
            ),
            (
                head(206, length: 600, range: "bytes 400-999/1000", etag: "\"v2\""), resume, recorded,
                .refetchFromStart(.resourceChanged, detail: "ETag \"v1\" became \"v2\"")
            ),
            (
                head(206, length: 600), resume, recorded,
                .refetchFromStart(.rangeMismatch, detail: "206 without a usable Content-Range (none)")
            ),
            (
                head(206, length: 5, range: "bytes 400-999/1000"), resume, recorded,
                .refetchFromStart(
                    .rangeMismatch, detail: "Content-Length 5 disagrees with Content-Range bytes 400-999/1000")
            ),
            // 416: complete when the size is where we are; otherwise the file changed.
            (
                head(416, range: "bytes */500"), RangeRequest(start: 500, overlap: 0), nil,
                .alreadyComplete(totalBytes: 500)
            ),
            (
                head(416, range: "bytes */300"), resume, recorded,
                .refetchFromStart(.resourceChanged, detail: "416 for bytes from 400 (Content-Range: bytes */300)")
            ),
            // Statuses.
            (head(503), fresh, nil, .retry(.httpStatus(503, reason: "R", url: "u"))),
            (head(429), fresh, nil, .retry(.httpStatus(429, reason: "R", url: "u"))),
            (head(408), fresh, nil, .retry(.httpStatus(408, reason: "R", url: "u"))),
            (head(404), fresh, nil, .fail(.httpStatus(404, reason: "R", url: "u"))),
            (head(403), fresh, nil, .fail(.httpStatus(403, reason: "R", url: "u"))),
            (head(204), fresh, nil, .fail(.malformedResponse("unexpected status 204 R for u"))),
        ] as [(ResponseHead, RangeRequest, ResourceValidator?, ResponseDecision)])
    func decisions(
        _ head: ResponseHead, _ request: RangeRequest, _ recorded: ResourceValidator?, _ expected: ResponseDecision
    ) {
        #expect(
            ResponseEvaluator.evaluate(head, request: request, recorded: recorded, url: "u", policy: .restart)
                == expected)
    }

    @Test("with the fail policy, a changed file fails instead of restarting")
    func failPolicy() {
        let changed = ResponseEvaluator.evaluate(
            Self.head(200, length: 1000, etag: "\"v2\""), request: Self.resume, recorded: Self.recorded, url: "u",
            policy: .fail)
        #expect(changed == .fail(.resourceChanged("ETag \"v1\" became \"v2\"")))
        let ignored = ResponseEvaluator.evaluate(
            Self.head(200, length: 1000), request: Self.resume, recorded: Self.recorded, url: "u", policy: .fail)
        #expect(ignored == .fail(.serverIgnoredRange))
    }

    @Test("If-Range uses a strong ETag, else Last-Modified")
    func ifRange() {
        #expect(ResourceValidator(etag: "\"a\"", lastModified: "LM").ifRange == "\"a\"")
        #expect(ResourceValidator(etag: "W/\"a\"", lastModified: "LM").ifRange == "LM")
        #expect(ResourceValidator(etag: nil, lastModified: nil).ifRange == nil)
    }
}

extension ResourceValidator {
    init(etag: String?, lastModified: String? = nil, totalBytes: Int64? = nil) {
        self.init(etag: etag, lastModified: lastModified, totalBytes: totalBytes, contentEncoding: nil)
    }
}
