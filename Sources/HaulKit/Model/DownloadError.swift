/// Why a download stopped or is retrying: what happened, what to do, and whether trying again can help.
///
/// Errors carry a stable numeric ``code`` (shared by the CLI's exit status, the database and the RPC API)
/// and ``isTransient``, which the retry loop uses: transient errors are retried with backoff, others end the
/// download. New errors are added as new static constructors, so callers never break.
public struct DownloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable number for each kind of error. Never renumbered.
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Connection refused, reset or closed, DNS failure.
        public static let networkFailure = Code(rawValue: 1)
        /// No bytes arrived for the stall timeout.
        public static let stalled = Code(rawValue: 2)
        /// The response ended before all promised bytes arrived.
        public static let responseTruncated = Code(rawValue: 3)
        /// The server answered 5xx.
        public static let serverError = Code(rawValue: 4)
        /// The server answered 429 or 408.
        public static let rateLimited = Code(rawValue: 5)
        /// The server answered 4xx (other than 408 and 429).
        public static let httpClientError = Code(rawValue: 6)
        /// More than the allowed number of redirects.
        public static let tooManyRedirects = Code(rawValue: 7)
        /// A redirect led back to a URL already visited.
        public static let redirectLoop = Code(rawValue: 8)
        /// The response broke HTTP's rules (bad framing, bad length, contradictory headers).
        public static let malformedResponse = Code(rawValue: 9)
        /// A `206` whose `Content-Range` did not match the request.
        public static let rangeMismatch = Code(rawValue: 10)
        /// The remote file changed and the download was told to fail rather than restart.
        public static let resourceChanged = Code(rawValue: 11)
        /// The server ignored a range request and the download was told to fail rather than restart.
        public static let serverIgnoredRange = Code(rawValue: 12)
        /// The finished file's digest differs from the expected checksum.
        public static let checksumMismatch = Code(rawValue: 13)
        /// No space left on the device.
        public static let diskFull = Code(rawValue: 14)
        /// The destination cannot be created or written (permissions, read-only, a symlink in the way).
        public static let destinationNotWritable = Code(rawValue: 15)
        /// Another file-system error.
        public static let fileSystem = Code(rawValue: 16)
        /// The URL is not an http(s) URL Haul can fetch.
        public static let invalidURL = Code(rawValue: 17)
        /// The TLS handshake failed (certificate, protocol).
        public static let tlsFailure = Code(rawValue: 18)
        /// An argument to the API or CLI is invalid.
        public static let invalidRequest = Code(rawValue: 19)
        /// No download has that identifier.
        public static let unknownDownload = Code(rawValue: 20)
        /// The state database cannot be opened or written.
        public static let stateDatabase = Code(rawValue: 21)
        /// The download restarted from byte 0 too often in one run (the server keeps changing its answer).
        public static let resourceUnstable = Code(rawValue: 22)
        /// A connection stayed below the lowest acceptable speed for the whole window.
        public static let tooSlow = Code(rawValue: 23)
        /// The download's record in the state database cannot be read.
        public static let damagedRecord = Code(rawValue: 24)
        /// Another download, or another process, already writes to the destination.
        public static let destinationInUse = Code(rawValue: 25)
        /// A redirect from https to plain http, refused (``RedirectPolicy/allowsInsecureRedirects``).
        public static let insecureRedirect = Code(rawValue: 26)
        /// Every request to the host (or to the proxy in front of it) failed for the time allowed without
        /// progress (no connection, no answer, or 5xx, 408 and 429), so its downloads fail at once instead of each
        /// trying for that long.
        public static let hostDown = Code(rawValue: 27)
        /// The foreground command that owned the download (`haul get`) ended before it finished; it keeps its data
        /// and waits until that command runs again or it is resumed.
        public static let interrupted = Code(rawValue: 28)
        /// The completed file was changed or replaced on disk since Haul put it there, and was kept as it is
        /// (``ExistingFilePolicy/keep``).
        public static let fileChanged = Code(rawValue: 29)
        /// The bytes differ from a digest the server stated (`Repr-Digest`, `Content-Digest`, `Digest`,
        /// `Content-MD5`, `x-goog-hash`, `x-amz-checksum-*`), and the file did not change on the server meanwhile.
        public static let serverDigestMismatch = Code(rawValue: 30)
        /// An internal invariant failed; please report it.
        public static let internalError = Code(rawValue: 99)

        public var description: String { String(rawValue) }
    }

    /// The kind of error; stable across versions.
    public let code: Code
    /// What happened, in one sentence.
    public let summary: String
    /// What the user can do about it.
    public let suggestion: String
    /// True when trying again later may succeed; the retry loop retries only these.
    public let isTransient: Bool
    /// The HTTP status that caused the error, if any.
    public let httpStatus: Int?
    /// How long the server asked us to wait (`Retry-After`), if it did.
    public let retryAfter: Duration?

    /// Rebuilds an error from its stored parts (e.g. read back from the state database).
    public init(
        code: Code, summary: String, suggestion: String, isTransient: Bool, httpStatus: Int? = nil,
        retryAfter: Duration? = nil
    ) {
        self.code = code
        self.summary = summary
        self.suggestion = suggestion
        self.isTransient = isTransient
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
    }

    /// `summary: suggestion`, one line.
    public var description: String { "\(summary): \(suggestion)" }

    /// The same error, noting that it ended the download after `attempts` tries.
    func givingUp(after attempts: Int) -> DownloadError {
        DownloadError(
            code: code, summary: "\(summary) (gave up after \(attempts) attempt\(attempts == 1 ? "" : "s"))",
            suggestion: suggestion,
            isTransient: isTransient, httpStatus: httpStatus, retryAfter: retryAfter)
    }

    /// An explicit refusal to serve now (429, 503): a server that limits connections says so.
    var isRefusal: Bool { httpStatus == 429 || httpStatus == 503 }

    /// The same error, noting that it ended the download after `limit` without a new byte.
    func givingUp(afterNoProgressFor limit: Duration) -> DownloadError {
        DownloadError(
            code: code, summary: "\(summary) (gave up: no new data for \(limit.wholeSeconds) s)",
            suggestion: suggestion, isTransient: isTransient, httpStatus: httpStatus, retryAfter: retryAfter)
    }
}

// MARK: - Constructors

extension DownloadError {
    public static func networkFailure(_ detail: String) -> DownloadError {
        .init(
            code: .networkFailure, summary: "network failure: \(detail)",
            suggestion: "check the connection and the host name; Haul retries and resumes on its own",
            isTransient: true)
    }

    /// Every request to `route` failed for `duration`: `attempts` in all, the last with `last` (whose HTTP status, if
    /// any, it keeps: the exit status and the RPC's error code tell a host that answers 503 from one that is gone).
    public static func hostDown(
        _ route: String, for duration: Duration, attempts: Int, last: DownloadError
    ) -> DownloadError {
        .init(
            code: .hostDown,
            summary: "every request to \(route) failed for \(duration.wholeSeconds) s (\(attempts) attempt"
                + "\(attempts == 1 ? "" : "s"), the last with \(last.summary))",
            suggestion: "check that the host is up and reachable (its name, the network, any proxy), then resume these "
                + "downloads", isTransient: false, httpStatus: last.httpStatus)
    }

    /// A host never reached in this run: its name does not resolve, or it refuses connections (`last`, after
    /// `attempts` tries). Final: a wrong URL or a server that is not running does not come back by waiting.
    public static func unreachable(_ route: String, attempts: Int, last: DownloadError) -> DownloadError {
        .init(
            code: .networkFailure,
            summary:
                "\(last.summary) (\(attempts) attempt\(attempts == 1 ? "" : "s") to \(route), which never answered)",
            suggestion: "check the URL and that the server is running; to keep trying while it starts, add "
                + "--retry-connrefused (haul get waits up to --retry-max-time then)",
            isTransient: false)
    }

    public static func stalled(seconds: Int) -> DownloadError {
        .init(
            code: .stalled, summary: "no data arrived for \(seconds) s",
            suggestion: "the server or network stalled; Haul resumes from what is on disk, or raise the stall timeout",
            isTransient: true)
    }

    public static func responseTruncated(received: Int64, expected: Int64) -> DownloadError {
        .init(
            code: .responseTruncated,
            summary: "the response ended after \(received) of \(expected) promised bytes",
            suggestion: "the connection broke mid-body; Haul resumes from what is on disk", isTransient: true)
    }

    /// An HTTP status that is not a success; transient for 408, 429 and 5xx.
    public static func httpStatus(
        _ status: Int, reason: String, url: String, retryAfter: Duration? = nil
    )
        -> DownloadError
    {
        switch status {
        case 408, 429:
            return .init(
                code: .rateLimited, summary: "\(status) \(reason) for \(url)",
                suggestion: "the server asked us to slow down; Haul waits and retries", isTransient: true,
                httpStatus: status, retryAfter: retryAfter)
        case 500...599:
            return .init(
                code: .serverError, summary: "\(status) \(reason) for \(url)",
                suggestion: "the server failed; Haul retries, or try again later", isTransient: true,
                httpStatus: status, retryAfter: retryAfter)
        case 401, 403:
            return .init(
                code: .httpClientError, summary: "\(status) \(reason) for \(url)",
                suggestion: status == 401
                    ? "the server wants credentials, or refused the ones sent: give them with --user, ~/.netrc or "
                        + "user:password@ in the URL, and check them"
                    : "the server refused access: check the URL and the credentials",
                isTransient: false, httpStatus: status)
        case 404, 410:
            return .init(
                code: .httpClientError, summary: "\(status) \(reason) for \(url)", suggestion: "check the URL",
                isTransient: false, httpStatus: status)
        default:
            return .init(
                code: .httpClientError, summary: "\(status) \(reason) for \(url)",
                suggestion: "the server rejected the request; check the URL and headers", isTransient: false,
                httpStatus: status)
        }
    }

    public static func tooManyRedirects(limit: Int) -> DownloadError {
        .init(
            code: .tooManyRedirects, summary: "more than \(limit) redirects",
            suggestion: "the server keeps redirecting; use the final URL directly", isTransient: false)
    }

    public static var redirectLoop: DownloadError {
        .init(
            code: .redirectLoop, summary: "the redirects form a loop",
            suggestion: "the server is misconfigured; use another URL", isTransient: false)
    }

    public static func insecureRedirect(from: String, to: String) -> DownloadError {
        .init(
            code: .insecureRedirect, summary: "\(from) redirects to \(to), which is not encrypted",
            suggestion: "the rest would travel in clear text; allow it with --allow-insecure-redirect if you trust "
                + "the network", isTransient: false)
    }

    public static func malformedResponse(_ detail: String) -> DownloadError {
        .init(
            code: .malformedResponse, summary: "malformed response: \(detail)",
            suggestion: "the server broke the HTTP protocol; try again later or report it to the site",
            isTransient: false)
    }

    public static func rangeMismatch(_ detail: String) -> DownloadError {
        .init(
            code: .rangeMismatch, summary: "the server sent the wrong range: \(detail)",
            suggestion: "the server handles ranges badly; Haul downloads from the start instead", isTransient: false)
    }

    public static func resourceChanged(_ detail: String) -> DownloadError {
        .init(
            code: .resourceChanged, summary: "the remote file changed during the download: \(detail)",
            suggestion: "resume to download the new version from the start", isTransient: false)
    }

    public static var serverIgnoredRange: DownloadError {
        .init(
            code: .serverIgnoredRange, summary: "the server ignored the range request and sent the whole file",
            suggestion: "the server cannot resume; resume to download from the start", isTransient: false)
    }

    /// The finished file's digest differs from the expected checksum; its bytes are kept at `keptAt` (never at the
    /// destination), or were deleted when that is nil.
    public static func checksumMismatch(expected: Checksum, actual: String, keptAt: String? = nil) -> DownloadError {
        let kept = keptAt.map { "its bytes are kept in \($0), never at the destination" } ?? "its bytes were deleted"
        return .init(
            code: .checksumMismatch,
            summary: "the downloaded file's \(expected.algorithm.rawValue) is \(actual), expected \(expected.hex)",
            suggestion: "the file is not the one expected (\(kept)); check the checksum and the URL, then run again "
                + "to download it again",
            isTransient: false)
    }

    /// The bytes of `what` ("the file", "bytes 0-1048575") have `actual` as their `algorithm` digest, where the
    /// server's `header` stated `expected`; the file's bytes are kept at `keptAt` (never at the destination), or were
    /// deleted when that is nil.
    public static func serverDigestMismatch(
        _ what: String, algorithm: DigestAlgorithm, header: String, expected: String, actual: String,
        keptAt: String? = nil
    ) -> DownloadError {
        let kept = keptAt.map { "its bytes are kept in \($0), never at the destination" } ?? "its bytes were deleted"
        return .init(
            code: .serverDigestMismatch,
            summary: "\(what) has the \(algorithm) \(actual), but the server's \(header) says \(expected)",
            suggestion: "the bytes were damaged on the way or the server's copy is corrupt (\(kept)); run again to "
                + "download it again, or use --no-verify-server-digest if the server's digest is known to be wrong",
            isTransient: false)
    }

    /// Piece `index` (bytes `first`-`last`) of a file with piece hashes (a Metalink's) had the `algorithm` digest
    /// `actual` from every source, not `expected`; the file's bytes are kept at `keptAt`, or were deleted.
    public static func pieceMismatch(
        _ index: Int, first: Int64, last: Int64, algorithm: DigestAlgorithm, expected: String, actual: String,
        keptAt: String? = nil
    ) -> DownloadError {
        let kept = keptAt.map { "its bytes are kept in \($0), never at the destination" } ?? "its bytes were deleted"
        return .init(
            code: .checksumMismatch,
            summary: "piece \(index) (bytes \(first)-\(last)) has the \(algorithm) \(actual) from every source, "
                + "expected \(expected)",
            suggestion:
                "no source serves that piece as the Metalink says (\(kept)); check the Metalink, then run again",
            isTransient: false)
    }

    /// A streamed file's digest differs from the expected checksum; its bytes were already delivered.
    public static func streamChecksumMismatch(expected: Checksum, actual: String) -> DownloadError {
        .init(
            code: .checksumMismatch,
            summary: "\(expected.algorithm.rawValue) is \(actual), expected \(expected.hex)",
            suggestion: "the streamed bytes are not the file expected: discard them; check the checksum or the URL",
            isTransient: false)
    }

    /// A streamed file's bytes have `actual` as their `algorithm` digest, where the server's `header` stated
    /// `expected` for the whole file; they were already delivered.
    static func streamServerDigestMismatch(
        algorithm: DigestAlgorithm, header: String, expected: String, actual: String
    ) -> DownloadError {
        .init(
            code: .serverDigestMismatch,
            summary: "the file has the \(algorithm) \(actual), but the server's \(header) says \(expected)",
            suggestion: "the streamed bytes were damaged on the way or the server's copy is corrupt: discard them; run "
                + "again, or use --no-verify-server-digest if the server's digest is known to be wrong",
            isTransient: false)
    }

    /// The foreground command that owned download `id` ended before it finished.
    public static func interrupted(_ id: DownloadID) -> DownloadError {
        .init(
            code: .interrupted, summary: "download \(id) was interrupted: the command that ran it ended first",
            suggestion: "run that command again to continue it, or 'haul resume \(id)' to hand it to the queue",
            isTransient: false)
    }

    /// The completed file at `path` was changed since Haul put it there (`how`), and is kept as it is.
    public static func fileChanged(path: String, how: String) -> DownloadError {
        .init(
            code: .fileChanged, summary: "\(path) \(how); it was kept as it is (--no-clobber)",
            suggestion: "move it away, or run again with --overwrite to download it again",
            isTransient: false)
    }

    /// A completed file asked to be deleted with its download changed since Haul put it there (`how`): it is kept,
    /// and so is the download.
    public static func changedFileNotDeleted(path: String, how: String, id: DownloadID) -> DownloadError {
        .init(
            code: .fileChanged, summary: "\(path) \(how): it is not the file Haul downloaded, so it was not deleted",
            suggestion:
                "delete it yourself if it is no longer wanted; 'haul remove \(id)' forgets the download and keeps it",
            isTransient: false)
    }

    public static func diskFull(path: String) -> DownloadError {
        .init(
            code: .diskFull, summary: "no space left on the device writing \(path)",
            suggestion: "free some space, then resume: what was downloaded is kept", isTransient: false)
    }

    /// The download waits for room on its file system (``FreeSpacePolicy``): not a failure, the reason it shows
    /// while it waits (``DownloadSnapshot/isWaitingForSpace``), with the ``Code/diskFull`` code. Not transient: no
    /// retry budget is spent on it; the download waits for space instead, and goes on by itself once there is room.
    public static func waitingForSpace(_ shortage: FreeSpaceShortage) -> DownloadError {
        .init(
            code: .diskFull, summary: shortage.description,
            suggestion: "free some space on that file system: the download goes on by itself", isTransient: false)
    }

    public static func destinationNotWritable(path: String, reason: String) -> DownloadError {
        .init(
            code: .destinationNotWritable, summary: "cannot write \(path): \(reason)",
            suggestion: "choose another destination or fix its permissions", isTransient: false)
    }

    public static func fileSystem(path: String, reason: String) -> DownloadError {
        .init(
            code: .fileSystem, summary: "file-system error on \(path): \(reason)",
            suggestion: "check the disk and the path, then resume", isTransient: false)
    }

    public static func invalidURL(_ url: String, reason: String) -> DownloadError {
        .init(
            code: .invalidURL, summary: "invalid URL '\(url)': \(reason)",
            suggestion: "give a full http:// or https:// URL", isTransient: false)
    }

    public static func tlsFailure(_ detail: String) -> DownloadError {
        .init(
            code: .tlsFailure, summary: "TLS failed: \(detail)",
            suggestion: "check the server's certificate and the system trust store", isTransient: false)
    }

    public static func invalidRequest(_ detail: String) -> DownloadError {
        .init(code: .invalidRequest, summary: detail, suggestion: "fix the argument and try again", isTransient: false)
    }

    public static func unknownDownload(_ id: DownloadID) -> DownloadError {
        .init(
            code: .unknownDownload, summary: "no download with id \(id)",
            suggestion: "list the downloads to find the right id", isTransient: false)
    }

    public static func stateDatabase(path: String, reason: String, suggestion: String? = nil) -> DownloadError {
        .init(
            code: .stateDatabase, summary: "state database \(path): \(reason)",
            suggestion: suggestion ?? "check that the directory is writable and the file is not corrupt",
            isTransient: false)
    }

    /// The state database at `path` is not a database, or a read found it damaged (overwritten, truncated, another
    /// file).
    public static func damagedStateDatabase(path: String, reason: String) -> DownloadError {
        .stateDatabase(
            path: path, reason: "it is damaged (\(reason))",
            suggestion: "move it away (to \(path).damaged, say, with its -wal and -shm files if any) and run "
                + "again: Haul starts a new one. The files already downloaded stay: with -d, add --no-clobber to keep "
                + "them rather than fetch them again as 'NAME (1)'. Or give another --state-dir")
    }

    /// The shared PostgreSQL queue at `location` (its URL, password masked) cannot be reached or used.
    public static func sharedDatabase(_ location: String, reason: String) -> DownloadError {
        .init(
            code: .stateDatabase, summary: "shared database \(location): \(reason)",
            suggestion: "check that the server is reachable and that the URL's user may create tables in it",
            isTransient: false)
    }

    public static func resourceUnstable(restarts: Int, lastReason: String) -> DownloadError {
        .init(
            code: .resourceUnstable,
            summary: "the server's answers kept changing: \(restarts) restarts from the start (last: \(lastReason))",
            suggestion: "the server (or a load balancer) serves inconsistent versions; try another mirror or later",
            isTransient: false)
    }

    public static func tooSlow(bytesPerSecond: Int64, window: Duration) -> DownloadError {
        .init(
            code: .tooSlow,
            summary: "the transfer stayed below \(bytesPerSecond) bytes/s for \(window.wholeSeconds) s",
            suggestion:
                "the server or network is trickling; Haul resumes on a fresh connection, or lower the lowest speed",
            isTransient: true)
    }

    public static func damagedRecord(_ id: DownloadID, reason: String) -> DownloadError {
        .init(
            code: .damagedRecord, summary: "the record of download \(id) is damaged: \(reason)",
            suggestion: "remove this download and add it again; the other downloads are unaffected",
            isTransient: false)
    }

    public static func destinationInUse(path: String, by holder: String) -> DownloadError {
        .init(
            code: .destinationInUse, summary: "\(path) is already being written by \(holder)",
            suggestion: "choose another output file, or wait for the other download to finish", isTransient: false)
    }

    /// A file appeared at the destination while the download ran, and the download may not replace it: it is left
    /// as it is, and so are the download's bytes (in `partPath`, when they are on disk).
    public static func destinationTaken(path: String, partPath: String?) -> DownloadError {
        .init(
            code: .destinationInUse,
            summary: "a file appeared at \(path) while the download ran; it is not Haul's, so it was left as it is",
            suggestion: "move it away and resume the download (or run the same command again)"
                + (partPath.map { "; its bytes are kept in \($0)" } ?? "")
                + "; to replace the file instead, let the download replace files (--overwrite)",
            isTransient: false)
    }

    public static func internalError(_ detail: String) -> DownloadError {
        .init(
            code: .internalError, summary: "internal error: \(detail)",
            suggestion: "please report this; resuming continues from what is on disk", isTransient: false)
    }
}
