import Foundation

extension DownloadManager {
    /// Downloads `url` into `consumer` as its bytes arrive, in order, with no part file and no record: for standard
    /// output, pipes and processing on the fly. Redirects, logins, cookies, proxies, TLS and the speed limits apply
    /// as for a download with `options`.
    ///
    /// One connection, run by the same transfer machine, retries and body writer as a download. A response that
    /// breaks off, stalls or falls below ``Configuration/lowestSpeed`` is continued from the bytes already delivered
    /// (`Range` with `If-Range`, the last ``Configuration/resumeOverlap`` bytes re-fetched and compared), within the
    /// configuration's ``RetryPolicy``; a file that changed meanwhile fails with
    /// ``DownloadError/Code/resourceChanged``, since delivered bytes cannot be taken back. Nothing survives the
    /// process: a stream that failed is run again from the start. With ``DownloadOptions/checksum``, and with a digest
    /// the server states for the whole file (unless ``DownloadOptions/serverDigests`` ignores it), the bytes are
    /// hashed as they pass and a mismatch is thrown at the end (they were delivered: the consumer discards them).
    ///
    /// - Parameters:
    ///   - url: an `http` or `https` URL.
    ///   - options: headers, credentials, redirects, request pacing, a speed limit, a checksum and server digests
    ///     apply; the rest does not.
    ///   - progress: called after each delivery with the bytes delivered and the size, when known.
    ///   - consumer: takes each run of bytes; an error it throws stops the stream and is rethrown as it is.
    /// - Returns: what the server said about the file.
    /// - Throws: a ``DownloadError``, the consumer's error, or `CancellationError` when the task is cancelled.
    public nonisolated func stream(
        _ url: URL, options: DownloadOptions = .init(),
        progress: @escaping @Sendable (_ delivered: Int64, _ expected: Int64?) -> Void = { _, _ in },
        into consumer: (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> RemoteFile {
        let (url, options) = Self.separatingCredentials(url, options)
        try Self.validate(url)
        var run = StreamRun(
            url: url, options: options, session: session, settings: engineSettings,
            limiter: RateLimiter(bytesPerSecond: options.speedLimit, clock: configuration.tickClock),
            globalLimiter: globalLimiter, hostLimiter: await hostLimiter(url.host ?? ""))
        return try await run.run(progress: progress, into: consumer)
    }
}
