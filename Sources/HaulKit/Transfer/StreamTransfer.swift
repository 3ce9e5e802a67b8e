import AsyncHTTPClient
import Foundation
import NIOCore

/// Delivers one URL's body, in order, to a consumer instead of a part file (``DownloadManager/stream(_:options:progress:into:)``).
///
/// One connection, nothing recorded. A response that breaks off is continued from the bytes already delivered with
/// `Range` and `If-Range`, re-fetching the last ``overlap`` bytes and comparing them with a copy kept in memory, so
/// a stream is never spliced from two versions; a server that ignores ranges resends the same version from byte 0
/// and the delivered bytes are skipped. A file that changed meanwhile ends the stream: delivered bytes cannot be
/// taken back. Retries follow the manager's ``RetryPolicy``; the speed limits apply. With a checksum, the delivered
/// bytes are hashed as they pass and a mismatch is thrown at the end.
struct StreamTransfer: Sendable {
    /// Bytes re-fetched before a resume point and compared with what was delivered.
    static let overlap = 64 * 1024

    let url: URL
    let options: DownloadOptions
    let session: HTTPSession
    let settings: DownloadManager.Configuration
    let limiters: [RateLimiter]

    /// The delivered bytes a resume compares: the last ``overlap`` bytes, kept in one buffer trimmed now and then.
    private struct Tail {
        private(set) var bytes: [UInt8] = []

        mutating func append(_ chunk: UnsafeRawBufferPointer) {
            bytes.append(contentsOf: chunk)
            if bytes.count > 2 * StreamTransfer.overlap { bytes.removeFirst(bytes.count - StreamTransfer.overlap) }
        }

        /// The last `count` bytes.
        func last(_ count: Int) -> ArraySlice<UInt8> { bytes.suffix(count) }
    }

    func run(
        progress: @Sendable (_ delivered: Int64, _ expected: Int64?) -> Void,
        into consumer: (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> RemoteFile {
        let stopwatch = Stopwatch(settings.clock)
        var budget = RetryBudget(policy: settings.retry, startingWith: 0, at: .zero)
        var delivered: Int64 = 0
        var validator: ResourceValidator?
        var tail = Tail()
        var decoding = false
        var hasher = options.checksum.map { DigestHasher(DigestAlgorithm($0.algorithm)) }
        let profile = RequestProfile(
            userAgent: settings.userAgent, custom: options.headers, credentials: options.credentials,
            redirects: options.redirects)
        while true {
            do {
                try Task.checkCancellation()
                let overlap = Int64(min(Int64(Self.overlap), delivered))
                // A decoded body has no byte ranges: it is fetched whole and the delivered bytes are skipped.
                let request = RangeRequest(start: decoding ? 0 : delivered - overlap, overlap: decoding ? 0 : overlap)
                let (response, finalURL) = try await session.get(
                    url.absoluteString, profile: profile,
                    range: request.start > 0 ? "bytes=\(request.start)-" : nil,
                    ifRange: request.start > 0 ? validator?.ifRange : nil, decoding: decoding, logger: settings.logger)
                let head = ResponseHead(response, now: Date())
                if !decoding, let encoding = head.contentEncoding,
                    ResourceValidator.decodableEncodings.contains(encoding.lowercased()),
                    !FileNamer.saysCompressed(url.lastPathComponent)
                {
                    // Compressed although identity was asked for: the stream carries the decoded bytes, as a file
                    // download does.
                    settings.logger.info(
                        "decoding an unrequested Content-Encoding", metadata: ["encoding": "\(encoding)"])
                    decoding = true
                    continue
                }
                let decision = ResponseEvaluator.evaluate(
                    head, request: request, recorded: validator, url: url.absoluteString, policy: .restart)
                var skip: Int64
                var compare: Int
                switch decision {
                case .write(let offset, let new, let restart):
                    if let restart, delivered > 0, restart != .serverIgnoredRange {
                        throw DownloadError.resourceChanged(
                            "the file changed on the server during the stream (\(restart)); the bytes "
                                + "already written cannot be taken back")
                    }
                    if validator == nil || decoding { validator = new }
                    // From a fresh copy (offset 0), skip what was delivered but the overlap; then compare the overlap.
                    skip = offset == 0 ? max(0, delivered - overlap) : 0
                    compare = Int(overlap)
                case .alreadyComplete:
                    return remoteFile(head: head, finalURL: finalURL, validator: validator)
                case .refetchFromStart(let reason, let detail):
                    guard delivered > 0 else { throw DownloadError.restart(reason, detail: detail) }
                    throw DownloadError.resourceChanged(
                        "\(detail); the bytes already written cannot be taken back")
                case .retry(let error), .fail(let error):
                    throw error
                }
                if decoding { (skip, compare) = (delivered, 0) }
                let body = response.body
                try await session.transport.watchdog.watchNonsendable { watch in
                    var parts = body.makeAsyncIterator()
                    while true {
                        watch.waiting()
                        guard var chunk = try await parts.next() else { return }
                        watch.busy()
                        if skip > 0 {
                            let count = Int(min(skip, Int64(chunk.readableBytes)))
                            chunk.moveReaderIndex(forwardBy: count)
                            skip -= Int64(count)
                        }
                        if compare > 0, chunk.readableBytes > 0 {
                            let count = min(compare, chunk.readableBytes)
                            let expected = tail.last(compare).prefix(count)
                            let same = chunk.readableBytesView.prefix(count).elementsEqual(expected)
                            guard same else {
                                throw DownloadError.resourceChanged(
                                    "the bytes before the resume point differ from those already written, which cannot be "
                                        + "taken back")
                            }
                            chunk.moveReaderIndex(forwardBy: count)
                            compare -= count
                        }
                        guard chunk.readableBytes > 0 else { continue }
                        let count = chunk.readableBytes
                        try chunk.withUnsafeReadableBytes { bytes in
                            do { try consumer(bytes) } catch { throw ConsumerFailed(error: error) }
                            tail.append(bytes)
                            hasher?.update(bytes)
                        }
                        delivered += Int64(count)
                        budget.observe(bytes: delivered, at: stopwatch.elapsed)
                        progress(delivered, validator?.totalBytes)
                        let pause = limiters.map { $0.delay(for: count) }.max() ?? .zero
                        if pause > .zero { try await settings.tickClock.sleep(for: pause) }
                    }
                }
                if let total = validator?.totalBytes, delivered < total {
                    throw DownloadError.responseTruncated(received: delivered, expected: total)
                }
                if let expected = options.checksum, let actual = hasher.map({ DigestHasher.hex($0.finalize()) }),
                    actual != expected.hex
                {
                    throw ConsumerFailed(
                        error: DownloadError.streamChecksumMismatch(expected: expected, actual: actual))
                }
                return remoteFile(head: head, finalURL: finalURL, validator: validator)
            } catch is CancellationError {
                throw CancellationError()
            } catch let stopped as ConsumerFailed {
                throw stopped.error  // never retried: the consumer's failure (or the checksum's) is not the network's
            } catch {
                let failure = DownloadError.mapping(error, stallTimeout: settings.stallTimeout)
                guard failure.isTransient else { throw failure }
                switch budget.failed(failure, bytes: delivered, at: stopwatch.elapsed, random: .random(in: 0...1)) {
                case .giveUp(let final):
                    throw final
                case .retry(let delay, let attempt):
                    settings.logger.info(
                        "retrying the stream",
                        metadata: ["attempt": "\(attempt)", "delivered": "\(delivered)", "error": "\(failure)"])
                    try await settings.clock.sleep(for: delay)
                }
            }
        }
    }

    /// The consumer threw `error` (or the delivered bytes failed their checksum): the stream stops with it.
    private struct ConsumerFailed: Error {
        var error: any Error
    }

    private func remoteFile(head: ResponseHead, finalURL: URL, validator: ResourceValidator?) -> RemoteFile {
        RemoteFile(
            url: url, finalURL: finalURL, status: head.status, size: validator?.totalBytes,
            acceptsRanges: head.status == 206, etag: validator?.etag, lastModified: validator?.lastModified,
            suggestedName: FileNamer.name(contentDisposition: head.contentDisposition, url: finalURL))
    }
}
