extension DownloadError.Code {
    /// The code's name in ``DownloadError/Code`` (`httpClientError` for 6), as `--json` prints it beside the number;
    /// `code42` for a number this version does not know (a record written by a newer one).
    public var name: String { Self.names[rawValue] ?? "code\(rawValue)" }

    /// Every code's name by number. `ErrorTableTests` checks it against the constants of ``DownloadError/Code`` and
    /// the table in docs/errors.md.
    public static let names: [Int: String] = [
        Self.networkFailure.rawValue: "networkFailure",
        Self.stalled.rawValue: "stalled",
        Self.responseTruncated.rawValue: "responseTruncated",
        Self.serverError.rawValue: "serverError",
        Self.rateLimited.rawValue: "rateLimited",
        Self.httpClientError.rawValue: "httpClientError",
        Self.tooManyRedirects.rawValue: "tooManyRedirects",
        Self.redirectLoop.rawValue: "redirectLoop",
        Self.malformedResponse.rawValue: "malformedResponse",
        Self.rangeMismatch.rawValue: "rangeMismatch",
        Self.resourceChanged.rawValue: "resourceChanged",
        Self.serverIgnoredRange.rawValue: "serverIgnoredRange",
        Self.checksumMismatch.rawValue: "checksumMismatch",
        Self.diskFull.rawValue: "diskFull",
        Self.destinationNotWritable.rawValue: "destinationNotWritable",
        Self.fileSystem.rawValue: "fileSystem",
        Self.invalidURL.rawValue: "invalidURL",
        Self.tlsFailure.rawValue: "tlsFailure",
        Self.invalidRequest.rawValue: "invalidRequest",
        Self.unknownDownload.rawValue: "unknownDownload",
        Self.stateDatabase.rawValue: "stateDatabase",
        Self.resourceUnstable.rawValue: "resourceUnstable",
        Self.tooSlow.rawValue: "tooSlow",
        Self.damagedRecord.rawValue: "damagedRecord",
        Self.destinationInUse.rawValue: "destinationInUse",
        Self.insecureRedirect.rawValue: "insecureRedirect",
        Self.hostDown.rawValue: "hostDown",
        Self.interrupted.rawValue: "interrupted",
        Self.fileChanged.rawValue: "fileChanged",
        Self.serverDigestMismatch.rawValue: "serverDigestMismatch",
        Self.internalError.rawValue: "internalError",
    ]
}
