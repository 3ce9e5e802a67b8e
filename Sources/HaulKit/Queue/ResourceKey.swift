import Foundation

/// How a download is recognised when it is asked for again: its URL without the query parameters that sign it.
///
/// A freshly signed URL for the same file (S3, Google Cloud Storage, Azure, CloudFront, a CDN token) differs only in
/// its signature, expiry and credential parameters; it is the same download, resumed into the same part file when
/// the server's validators agree (`If-Range` and the overlap check decide, as for any resume). Any other difference
/// (another path, another parameter such as `?id=2`) is another download.
enum ResourceKey {
    /// Query parameters (compared without case) that sign or expire a URL rather than name the file.
    static let signingParameters: Set<String> = [
        // AWS S3 (SigV4 and SigV2).
        "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-expires", "x-amz-signedheaders",
        "x-amz-signature", "x-amz-security-token", "x-amz-content-sha256", "awsaccesskeyid", "signature", "expires",
        // Google Cloud Storage.
        "x-goog-algorithm", "x-goog-credential", "x-goog-date", "x-goog-expires", "x-goog-signedheaders",
        "x-goog-signature", "googleaccessid",
        // Azure shared access signatures.
        "sv", "ss", "srt", "sp", "se", "st", "spr", "sig", "sr", "skoid", "sktid", "skt", "ske", "sks", "skv",
        // CloudFront.
        "policy", "key-pair-id",
        // Tokens of CDNs and web servers (Akamai, nginx secure_link, Alibaba, and the usual names).
        "hdnts", "auth_key", "md5", "token", "exp", "hmac",
    ]

    /// The key of `url`: the URL itself when it has no signing parameter, else the URL without them.
    static func of(_ url: String) -> String {
        // Looked for among the bytes: both are ASCII, and most URLs have neither (a scan by characters was 1% of
        // the CPU of many small downloads).
        guard let question = url.utf8.firstIndex(of: UInt8(ascii: "?")) else { return url }
        let end = url.utf8.firstIndex(of: UInt8(ascii: "#")) ?? url.endIndex
        guard question < end else { return url }
        let parameters = url[url.index(after: question)..<end].split(separator: "&", omittingEmptySubsequences: false)
        let kept = parameters.filter { parameter in
            let name = parameter.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return !signingParameters.contains((name.removingPercentEncoding ?? name).lowercased())
        }
        guard kept.count < parameters.count else { return url }
        let base = url[..<question]
        return kept.isEmpty ? String(base) : base + "?" + kept.joined(separator: "&")
    }

    /// Whether `one` and `other` name the same file (equal, or equal but for their signatures).
    static func same(_ one: String, _ other: String) -> Bool {
        one == other || of(one) == of(other)
    }
}
