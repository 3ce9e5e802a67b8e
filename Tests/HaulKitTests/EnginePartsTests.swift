import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import HaulKit

@Suite("Engine parts")
struct EnginePartsTests {
    // MARK: Response decisions, one line per case.

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
            (head(200, length: 1000), fresh, nil, .write(offset: 0, validator: .init(etag: etag, totalBytes: 1000), restart: nil)),
            (head(206, length: 1000, range: "bytes 0-999/1000"), fresh, nil, .write(offset: 0, validator: .init(etag: etag, totalBytes: 1000), restart: nil)),
            // Resuming: the right 206 is written at its start.
            (head(206, length: 600, range: "bytes 400-999/1000"), resume, recorded, .write(offset: 400, validator: recorded, restart: nil)),
            // 200 to a range request: same version → the server ignores ranges; new version → changed.
            (head(200, length: 1000), resume, recorded, .write(offset: 0, validator: .init(etag: etag, totalBytes: 1000), restart: .serverIgnoredRange)),
            (head(200, length: 1000, etag: "\"v2\""), resume, recorded, .write(offset: 0, validator: .init(etag: "\"v2\"", totalBytes: 1000), restart: .resourceChanged)),
            // 206 that does not fit: wrong start, other size, other ETag, no Content-Range, length disagreeing.
            (head(206, length: 600, range: "bytes 401-1000/1001"), resume, recorded, .refetchFromStart(.resourceChanged, detail: "size 1000 became 1001")),
            (head(206, length: 599, range: "bytes 401-999/1000"), resume, recorded, .refetchFromStart(.rangeMismatch, detail: "asked for bytes from 400, got bytes 401-999/1000")),
            (head(206, length: 600, range: "bytes 400-999/1000", etag: "\"v2\""), resume, recorded, .refetchFromStart(.resourceChanged, detail: "ETag \"v1\" became \"v2\"")),
            (head(206, length: 600), resume, recorded, .refetchFromStart(.rangeMismatch, detail: "206 without a usable Content-Range (none)")),
            (head(206, length: 5, range: "bytes 400-999/1000"), resume, recorded, .refetchFromStart(.rangeMismatch, detail: "Content-Length 5 disagrees with Content-Range bytes 400-999/1000")),
            // 416: complete when the size is where we are; otherwise the file changed.
            (head(416, range: "bytes */500"), RangeRequest(start: 500, overlap: 0), nil, .alreadyComplete(totalBytes: 500)),
            (head(416, range: "bytes */300"), resume, recorded, .refetchFromStart(.resourceChanged, detail: "416 for bytes from 400 (Content-Range: bytes */300)")),
            // Statuses.
            (head(503), fresh, nil, .retry(.httpStatus(503, reason: "R", url: "u"))),
            (head(429), fresh, nil, .retry(.httpStatus(429, reason: "R", url: "u"))),
            (head(408), fresh, nil, .retry(.httpStatus(408, reason: "R", url: "u"))),
            (head(404), fresh, nil, .fail(.httpStatus(404, reason: "R", url: "u"))),
            (head(403), fresh, nil, .fail(.httpStatus(403, reason: "R", url: "u"))),
            (head(204), fresh, nil, .fail(.malformedResponse("unexpected status 204 R for u"))),
        ] as [(ResponseHead, RangeRequest, ResourceValidator?, ResponseDecision)])
    func decisions(_ head: ResponseHead, _ request: RangeRequest, _ recorded: ResourceValidator?, _ expected: ResponseDecision) {
        #expect(ResponseEvaluator.evaluate(head, request: request, recorded: recorded, url: "u", policy: .restart) == expected)
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

    // MARK: Retry policy

    @Test(
        "backoff grows, is capped, is jittered and honours Retry-After",
        arguments: [
            (1, nil, 0.0, Duration.milliseconds(500)), (1, nil, 1.0, .seconds(1)), (2, nil, 1.0, .seconds(2)),
            (4, nil, 1.0, .seconds(8)), (20, nil, 1.0, .seconds(60)), (20, nil, 0.0, .seconds(30)),
            (1, .seconds(90), 0.5, .seconds(90)), (1, .seconds(99_999), 0.5, .seconds(3600)),
            (3, .milliseconds(1), 1.0, .seconds(4)),
        ] as [(Int, Duration?, Double, Duration)])
    func backoff(_ failure: Int, _ retryAfter: Duration?, _ random: Double, _ expected: Duration) {
        #expect(RetryPolicy().delay(afterFailure: failure, retryAfter: retryAfter, random: random) == expected)
    }

    // MARK: Speed gauge and token bucket

    @Test("the speed gauge follows a steady rate and decays when idle")
    func speedGauge() {
        var gauge = SpeedGauge()
        for step in 0...40 { gauge.record(bytes: Int64(step) * 250_000, at: Double(step) * 0.25) }
        #expect(abs(gauge.bytesPerSecond - 1_000_000) < 1)
        for step in 41...80 { gauge.record(bytes: 40 * 250_000, at: Double(step) * 0.25) }
        #expect(gauge.bytesPerSecond < 10_000)
        gauge.reset()
        #expect(gauge.bytesPerSecond == 0)
    }

    @Test("the token bucket holds the long-run rate and allows a short burst")
    func tokenBucket() {
        var bucket = TokenBucket(rate: 100_000)
        #expect(bucket.take(25_000, now: 0) == 0)  // the burst
        let wait = bucket.take(50_000, now: 0)
        #expect(abs(wait - 0.5) < 1e-9)
        #expect(bucket.take(10_000, now: 10) == 0)  // refilled, capped at the burst
        bucket.setRate(nil, now: 10)
        #expect(bucket.take(1 << 30, now: 10) == 0)
        var total = 0.0
        var limited = TokenBucket(rate: 1_000_000)
        var time = 0.0
        for _ in 0..<100 {
            let wait = limited.take(65_536, now: time)
            time += wait
            total += 65_536
        }
        #expect(total / time <= 1_000_000 * 1.05)
    }

    // MARK: Queue order

    @Test("the queue starts higher priorities first, then first come first served")
    func queueOrder() {
        var queue = DownloadQueue()
        queue.insert(1, priority: 0)
        queue.insert(2, priority: 5)
        queue.insert(3, priority: 0)
        queue.insert(4, priority: 5)
        queue.insert(5, priority: -1)
        queue.remove(3)
        queue.insert(1, priority: 0)
        #expect(queue.ids == [2, 4, 1, 5])
        #expect(queue.popFirst() == 2)
        #expect(!queue.contains(2))
        #expect(queue.count == 3)
    }

    @Test("the queue keeps its order across many pops, inserts and removals")
    func queueOrderAtScale() {
        var queue = DownloadQueue()
        var reference: [DownloadID: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        for id in 1...5_000 {
            let priority = Int.random(in: -2...2, using: &generator)
            queue.insert(DownloadID(rawValue: Int64(id)), priority: priority)
            reference[DownloadID(rawValue: Int64(id))] = priority
        }
        func expected() -> [DownloadID] {
            reference.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map(\.key)
        }
        for round in 0..<4 {
            let order = expected()
            for position in 0..<900 {
                let next = queue.popFirst()
                #expect(next == order[position])
                if let next { reference[next] = nil }
            }
            for id in stride(from: 1 + round, through: 5_000, by: 7) {
                let key = DownloadID(rawValue: Int64(id))
                if reference[key] != nil {
                    queue.remove(key)
                    reference[key] = nil
                } else {
                    queue.insert(key, priority: round)
                    reference[key] = round
                }
            }
            #expect(queue.ids == expected())
            #expect(queue.count == reference.count)
        }
    }

    // MARK: Error mapping

    @Test(
        "underlying errors map to typed, advised errors",
        arguments: [
            (HTTPClientError.readTimeout as any Error, DownloadError.Code.stalled, true),
            (HTTPClientError.connectTimeout, .networkFailure, true),
            (HTTPClientError.remoteConnectionClosed, .networkFailure, true),
            (HTTPClientError.redirectLimitReached, .tooManyRedirects, false),
            (HTTPClientError.redirectCycleDetected, .redirectLoop, false),
            (HTTPClientError.invalidURL, .invalidURL, false),
            (IOError(errnoCode: ECONNRESET, reason: "read"), .networkFailure, true),
            (HTTPParserError.invalidEOFState, .networkFailure, true),
            (HTTPParserError.invalidContentLength, .malformedResponse, false),
            (ChannelError.ioOnClosedChannel, .networkFailure, true),
            (DownloadError.diskFull(path: "/x"), .diskFull, false),
        ] as [(any Error, DownloadError.Code, Bool)])
    func errorMapping(_ error: any Error, _ code: DownloadError.Code, _ transient: Bool) {
        let mapped = DownloadError.mapping(error, stallTimeout: .seconds(30))
        #expect(mapped.code == code)
        #expect(mapped.isTransient == transient)
        #expect(!mapped.suggestion.isEmpty)
    }

    @Test(
        "file-system errnos map to what the user can act on",
        arguments: [
            (ENOSPC, DownloadError.Code.diskFull), (EDQUOT, .diskFull), (EACCES, .destinationNotWritable),
            (EROFS, .destinationNotWritable), (ELOOP, .destinationNotWritable), (EIO, .fileSystem),
        ] as [(Int32, DownloadError.Code)])
    func fileSystemErrors(_ code: Int32, _ expected: DownloadError.Code) {
        let error = DownloadError.fileSystem(errno: code, path: "/p", operation: "write")
        #expect(error.code == expected)
        #expect(!error.isTransient)
    }

    @Test("error codes are stable")
    func stableCodes() {
        #expect(DownloadError.Code.networkFailure.rawValue == 1)
        #expect(DownloadError.Code.checksumMismatch.rawValue == 13)
        #expect(DownloadError.Code.diskFull.rawValue == 14)
        #expect(DownloadError.Code.internalError.rawValue == 99)
    }
}

extension ResourceValidator {
    init(etag: String?, lastModified: String? = nil, totalBytes: Int64? = nil) {
        self.init(etag: etag, lastModified: lastModified, totalBytes: totalBytes, contentEncoding: nil)
    }
}
