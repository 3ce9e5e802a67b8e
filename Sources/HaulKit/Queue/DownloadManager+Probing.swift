import AsyncHTTPClient
import Foundation

extension DownloadManager {
    /// Asks the server about `url` without downloading it or recording anything: whether it answers, how large the
    /// file is, whether ranges (resume, several connections) work, its validators and name. Redirects, logins,
    /// cookies, proxies and TLS apply as for a download with `options`.
    ///
    /// One `GET` with `Range: bytes=0-0` (a `HEAD` is answered wrongly by too many servers); a server without ranges
    /// answers `200`, and its body is abandoned unread. Throws the error a download would have failed with.
    public func probe(_ url: URL, options: DownloadOptions = .init()) async throws(DownloadError) -> RemoteFile {
        let (url, options) = Self.separatingCredentials(url, options)
        try Self.validate(url)
        let profile = RequestProfile(
            userAgent: configuration.userAgent, custom: options.headers, credentials: options.credentials,
            redirects: options.redirects)
        let response: HTTPClientResponse
        let finalURL: URL
        do {
            (response, finalURL) = try await session.get(
                url.absoluteString, profile: profile, range: "bytes=0-0", logger: configuration.logger)
        } catch {
            throw DownloadError.mapping(error, stallTimeout: configuration.stallTimeout)
        }
        let head = ResponseHead(response, now: Date())
        let size: Int64?
        switch head.status {
        case 206:
            size = head.contentRange.flatMap(ContentRange.init(parsing:))?.completeLength
            // One byte: read it, so the connection serves the next request.
            await session.discard(response)
        case 200, 203:
            size = head.contentLength
        case 416:
            // A range past the end of an empty file.
            size = 0
        default:
            throw DownloadError.httpStatus(
                head.status, reason: head.reason, url: finalURL.absoluteString, retryAfter: head.retryAfter)
        }
        return RemoteFile(
            url: url, finalURL: finalURL, status: head.status, size: size, acceptsRanges: head.status == 206,
            etag: head.etag, lastModified: head.lastModified,
            suggestedName: FileNamer.name(contentDisposition: head.contentDisposition, url: finalURL))
    }
}
