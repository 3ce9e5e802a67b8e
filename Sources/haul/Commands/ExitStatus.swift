import ArgumentParser
import HaulKit

/// `haul`'s exit statuses. Stable: scripts depend on them.
enum ExitStatus {
    /// Every download completed.
    static let success = ExitCode(0)
    /// At least one download failed for another reason (a malformed response, redirects, a file that keeps
    /// changing, a refused URL).
    static let downloadFailed = ExitCode(1)
    /// A checksum did not match: the user's, or a digest the server stated.
    static let checksumMismatch = ExitCode(3)
    /// A disk or file-system error (disk full, not writable, state database).
    static let fileSystem = ExitCode(4)
    /// TLS failed: a certificate not trusted or for another host, a refused handshake (as wget's 5).
    static let tls = ExitCode(5)
    /// The network failed: a host name that does not resolve, a refused or unreachable connection, a connection
    /// that timed out, stalled or kept breaking.
    static let network = ExitCode(6)
    /// The server answered with an HTTP error: 404 and other 4xx, 5xx after the retries (as wget's 8).
    static let httpError = ExitCode(8)
    /// `haul serve` cannot listen on its address: the port is in use, not allowed, or the address is not this
    /// machine's (sysexits' `EX_UNAVAILABLE`: a service is unavailable).
    static let unavailable = ExitCode(69)
    /// Interrupted by Ctrl-C or SIGTERM; run the same command again to resume.
    static let interrupted = ExitCode(130)
    /// Bad arguments (ArgumentParser's `EX_USAGE`).
    static let usage = ExitCode.validationFailure

    /// The status for one failure.
    static func forFailure(_ error: DownloadError) -> ExitCode {
        switch error.code {
        case .diskFull, .destinationNotWritable, .destinationInUse, .fileSystem, .stateDatabase, .fileChanged:
            fileSystem
        case .checksumMismatch, .serverDigestMismatch: checksumMismatch
        case .tlsFailure: tls
        case .serverError, .rateLimited, .httpClientError: httpError
        case .hostDown where error.httpStatus != nil: httpError
        case .networkFailure, .hostDown, .stalled, .responseTruncated, .tooSlow: network
        default: downloadFailed
        }
    }

    /// The status for a set of failures: the most specific one wins (file system, checksum, TLS, HTTP, network).
    static func forFailures(_ errors: [DownloadError]) -> ExitCode {
        let order = [fileSystem, checksumMismatch, tls, httpError, network, downloadFailed]
        let statuses = Set(errors.map { forFailure($0).rawValue })
        return order.first { statuses.contains($0.rawValue) } ?? success
    }
}
