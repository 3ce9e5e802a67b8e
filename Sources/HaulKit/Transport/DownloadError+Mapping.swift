import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DownloadError {
    /// Maps any error raised while downloading to a ``DownloadError``: the one place where transport and
    /// file-system errors get their code, their advice and whether retrying can help.
    static func mapping(_ error: any Error, stallTimeout: Duration) -> DownloadError {
        switch error {
        case let error as DownloadError:
            return error
        case let error as HTTPClientError:
            return mapping(error, stallTimeout: stallTimeout)
        case let error as IOError:
            return .networkFailure(describe(errno: error.errnoCode))
        case let error as NIOConnectionError
        where error.connectionErrors.isEmpty
            && (error.dnsAError != nil || error.dnsAAAAError != nil):
            return .networkFailure("could not resolve the host name \(error.host)")
        case let error as NIOConnectionError:
            let detail = error.connectionErrors.first.map { describe($0.error) } ?? "no address could be reached"
            return .networkFailure("could not connect to \(error.host):\(error.port) (\(detail))")
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return .networkFailure("connecting timed out")
            default: return .networkFailure("the connection failed (\(error))")
            }
        case let error as HTTPParserError:
            if error == .invalidEOFState {
                return .networkFailure("the connection closed in the middle of the response")
            }
            return .malformedResponse("\(error)")
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return tlsFailure(describing: error)
        case let error as NIOHTTPDecompression.ExtraDecompressionError where error == .truncatedData:
            return .networkFailure("the connection closed in the middle of the compressed response")
        case let error as NIOHTTPDecompression.ExtraDecompressionError:
            return .malformedResponse("the compressed body is corrupt (\(error))")
        case let error as NIOHTTPDecompression.DecompressionError:
            return .malformedResponse("the compressed body cannot be decoded (\(error))")
        case is SocketAddressError:
            return .networkFailure("could not resolve the host name")
        default:
            return .networkFailure(String(describing: error))
        }
    }

    /// Whether `error`, raised before any response arrived, counts against the host (``HostGate``): any error worth
    /// retrying (no connection, a reset, no answer in time), never a cancellation (a pause) or a final error.
    static func isHostFailure(_ error: any Error) -> Bool {
        if error is CancellationError { return false }
        if let error = error as? HTTPClientError, error == .cancelled { return false }
        return mapping(error, stallTimeout: .zero).isTransient
    }

    /// Whether `error` says the host cannot be reached at all: its name does not resolve, or every address refused
    /// the connection (not a timeout, a reset or an error answer, which an outage brings).
    static func isUnreachable(_ error: any Error) -> Bool {
        switch error {
        case let error as NIOConnectionError where error.connectionErrors.isEmpty:
            return error.dnsAError != nil || error.dnsAAAAError != nil
        case let error as NIOConnectionError:
            return error.connectionErrors.allSatisfy { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
        case let error as IOError:
            return error.errnoCode == ECONNREFUSED
        case is SocketAddressError:
            return true
        default:
            return false
        }
    }

    private static func mapping(_ error: HTTPClientError, stallTimeout: Duration) -> DownloadError {
        switch error {
        case .readTimeout, .deadlineExceeded:
            return .stalled(seconds: Int(stallTimeout.wholeSeconds))
        case .connectTimeout, .getConnectionFromPoolTimeout:
            return .networkFailure("connecting timed out")
        case .tlsHandshakeTimeout:
            return .networkFailure("the TLS handshake timed out")
        case .remoteConnectionClosed:
            return .networkFailure("the server closed the connection")
        case .redirectLimitReached:
            return .tooManyRedirects(limit: HTTPTransport.maximumRedirects)
        case .redirectCycleDetected:
            return .redirectLoop
        case .invalidURL, .emptyHost, .emptyScheme:
            return .invalidURL("", reason: "\(error)")
        case .bodyLengthMismatch, .identityCodingIncorrectlyPresent:
            return .malformedResponse("\(error)")
        case .proxyAuthenticationRequired:
            return DownloadError(
                code: .httpClientError, summary: "407 the proxy asks for credentials",
                suggestion: "give them in the proxy URL: http://USER:PASSWORD@HOST:PORT", isTransient: false,
                httpStatus: 407)
        case .invalidProxyResponse:
            return .networkFailure("the proxy refused the connection (CONNECT failed)")
        default:
            return .networkFailure("\(error)")
        }
    }

    /// A TLS error in words: BoringSSL's reason code (`CERTIFICATE_VERIFY_FAILED`) rather than its whole
    /// description (with error numbers and source paths), and advice that fits it.
    private static func tlsFailure(describing error: any Error) -> DownloadError {
        let text = String(describing: error)
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return tlsFailure(
                "the server's certificate is for another host name",
                suggestion: "use the host name the certificate names, or --insecure to skip the check (unsafe)")
        }
        let reason = text.firstRange(of: "OPENSSL_internal:").map { found in
            String(text[found.upperBound...].prefix { $0.isUppercase || $0.isNumber || $0 == "_" })
        }
        switch reason {
        case "CERTIFICATE_VERIFY_FAILED":
            return tlsFailure(
                "the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED)",
                suggestion:
                    "if its authority is private, give it with --ca-certificate FILE; --insecure skips the check (unsafe)"
            )
        case "TLSV1_ALERT_CERTIFICATE_REQUIRED", "SSLV3_ALERT_HANDSHAKE_FAILURE", "TLSV1_ALERT_UNKNOWN_CA",
            "SSLV3_ALERT_BAD_CERTIFICATE":
            return tlsFailure(
                "the server refused the handshake (\(reason!))",
                suggestion: "it may ask for a client certificate: give --certificate FILE and --private-key FILE")
        case let reason? where !reason.isEmpty:
            return .tlsFailure(reason)
        default:
            return .tlsFailure(text)
        }
    }

    private static func tlsFailure(_ detail: String, suggestion: String) -> DownloadError {
        DownloadError(code: .tlsFailure, summary: "TLS failed: \(detail)", suggestion: suggestion, isTransient: false)
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return describe(errno: error.errnoCode) }
        return String(describing: error)
    }

    private static func describe(errno code: Int32) -> String {
        switch code {
        case ECONNREFUSED: "connection refused"
        case ECONNRESET: "connection reset by peer"
        case EPIPE: "broken pipe"
        case ETIMEDOUT: "connection timed out"
        case ENETUNREACH: "network unreachable"
        case EHOSTUNREACH: "host unreachable"
        default: String(cString: strerror(code))
        }
    }

    /// The error that describes a restart from byte 0 for `reason` (what a restart budget reports when spent).
    static func restart(_ reason: RestartReason, detail: String) -> DownloadError {
        switch reason {
        case .serverIgnoredRange: .serverIgnoredRange
        case .resourceChanged: .resourceChanged(detail)
        case .rangeMismatch: .rangeMismatch(detail)
        case .contentMismatch: .resourceChanged("the bytes before the resume point differ from the disk (\(detail))")
        case .checksumMismatch: .internalError("a checksum mismatch is not restarted: \(detail)")
        }
    }

    /// Maps a failed file-system call on `path` to a ``DownloadError``.
    static func fileSystem(errno code: Int32, path: String, operation: String) -> DownloadError {
        let reason = "\(operation): \(String(cString: strerror(code)))"
        switch code {
        case ENOSPC, EDQUOT: return .diskFull(path: path)
        case EACCES, EPERM, EROFS, ELOOP, EISDIR, ENOTDIR: return .destinationNotWritable(path: path, reason: reason)
        default: return .fileSystem(path: path, reason: reason)
        }
    }
}
