import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import HaulKit

@Suite("Errors")
struct DownloadErrorTests {
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

    @Test(
        "errors worth retrying count against a host (HostGate); a cancellation (a pause) and final errors do not",
        arguments: [
            (IOError(errnoCode: ECONNREFUSED, reason: "connect") as any Error, true),
            (IOError(errnoCode: EHOSTUNREACH, reason: "connect"), true),
            (HTTPClientError.connectTimeout, true),
            (HTTPClientError.deadlineExceeded, true),
            (ChannelError.connectTimeout(.seconds(10)), true),
            (IOError(errnoCode: ECONNRESET, reason: "read"), true),
            (HTTPClientError.remoteConnectionClosed, true),
            (DownloadError.networkFailure("x"), true),
            (CancellationError(), false),
            (HTTPClientError.cancelled, false),
            (HTTPClientError.invalidURL, false),
            (DownloadError.diskFull(path: "/x"), false),
        ] as [(any Error, Bool)])
    func hostFailures(_ error: any Error, _ counts: Bool) {
        #expect(DownloadError.isHostFailure(error) == counts)
    }

    @Test("error codes are stable")
    func stableCodes() {
        #expect(DownloadError.Code.networkFailure.rawValue == 1)
        #expect(DownloadError.Code.checksumMismatch.rawValue == 13)
        #expect(DownloadError.Code.diskFull.rawValue == 14)
        #expect(DownloadError.Code.hostDown.rawValue == 27)
        #expect(DownloadError.Code.internalError.rawValue == 99)
    }
}
