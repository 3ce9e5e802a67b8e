import Foundation

/// Sources that take over: the download's own URL is one source among the file's, and when it fails, a mirror
/// serves the file in its place, from the first request on.
extension DownloadJob {
    /// Whether `error`, the last word of the download's own source, says that source cannot serve the file: a
    /// `4xx` (not an expiry that a fresh URL can answer), a name that does not resolve, a refused or failed
    /// connection, TLS, a server that kept failing (`5xx`, stalls, cuts) until the retry budget was spent, or one that
    /// breaks HTTP or keeps changing its answer. Failures of the disk or the checks are not the source's.
    static func sourceFailed(_ error: DownloadError, canRefresh: Bool) -> Bool {
        switch error.code {
        case .httpClientError:
            return !(canRefresh && error.httpStatus.map(RequestTarget.expiryStatuses.contains) == true)
        case .networkFailure, .tlsFailure, .hostDown, .serverError, .rateLimited, .stalled, .tooSlow,
            .responseTruncated, .malformedResponse, .resourceUnstable, .insecureRedirect, .tooManyRedirects,
            .redirectLoop:
            return true
        default:
            return false
        }
    }

    /// The download's own source failed for good with `failure`: the next mirror still live takes over (it is no
    /// longer a mirror), and the download goes on from it without costing a retry. Returns whether one did.
    ///
    /// Nothing is spliced: the new source is asked with the validators of what is on disk (`If-Range`), so one that
    /// serves another version answers with its whole file, which replaces the bytes from byte 0.
    mutating func takeOver(after failure: DownloadError) async -> Bool {
        guard !mirrors.isEmpty, !Task.isCancelled else { return false }
        guard Self.sourceFailed(failure, canRefresh: target.canRefresh), let next = mirrors.takeOver() else {
            return false
        }
        let (failed, _, _) = target.current
        let reason = "it failed (\(failure.summary)); \(next.url) takes over"
        logger.notice(
            "the download's source failed; a mirror takes over",
            metadata: ["failed": "\(failed)", "mirror": "\(next.url)", "error": "\(failure.summary)"])
        if let address = URL(string: failed) { environment.events.yield(id, .mirrorDropped(address, reason: reason)) }
        target.takeOver(by: next.url)
        return true
    }

    /// The bytes of the complete file by the source that served them (one source when there were no mirrors).
    func sourceBytes(total: Int64) -> [DownloadSourceBytes] {
        let served = mirrors.servedBytes
        guard !served.isEmpty else {
            let url = record.transfer.finalURL ?? record.url
            return parsed(url).map { [DownloadSourceBytes(url: $0, bytes: total)] } ?? []
        }
        return served.compactMap { url, bytes in parsed(url).map { DownloadSourceBytes(url: $0, bytes: bytes) } }
    }

    /// `url` parsed: the last response's URL as the session parsed it when it is that one (most often: parsing it
    /// again was 0.5% of a small file's instructions).
    private func parsed(_ url: String) -> URL? {
        if let lastResponseURL, lastResponseURL.text == url { return lastResponseURL.url }
        return URL(string: url)
    }
}
