/// What identifies one version of a remote file: recorded from the first response, compared on every resume.
struct ResourceValidator: Sendable, Equatable, Codable {
    var etag: String?
    var lastModified: String?
    /// The complete length, when the server said.
    var totalBytes: Int64?
    /// `Content-Encoding` as sent; ranges then count encoded bytes, which is what is saved.
    var contentEncoding: String?

    /// True for an ETag usable in `If-Range` (RFC 9110 §13.1.5 requires a strong one).
    var hasStrongETag: Bool {
        guard let etag else { return false }
        return !etag.hasPrefix("W/")
    }

    /// The `If-Range` value: the strong ETag, else Last-Modified; nil when there is neither.
    var ifRange: String? {
        if hasStrongETag { return etag }
        return lastModified
    }

    /// Whether `other` (from a later response) describes a different version.
    ///
    /// Only what both responses state is compared: servers often omit validators on `206`.
    func differs(from other: ResourceValidator) -> String? {
        if let a = etag, let b = other.etag, a != b { return "ETag \(a) became \(b)" }
        if etag == nil || other.etag == nil, let a = lastModified, let b = other.lastModified, a != b {
            return "Last-Modified \(a) became \(b)"
        }
        if let a = totalBytes, let b = other.totalBytes, a != b { return "size \(a) became \(b)" }
        if (contentEncoding ?? "identity") != (other.contentEncoding ?? "identity") {
            return "Content-Encoding \(contentEncoding ?? "identity") became \(other.contentEncoding ?? "identity")"
        }
        return nil
    }

    /// Encodings Haul decodes when a server sends them unasked (AsyncHTTPClient's decompression handles these).
    static let decodableEncodings: Set<String> = ["gzip", "x-gzip", "deflate"]

    private static let decodedPrefix = "decoded:"

    /// The recorded encoding of a part file that holds the decoded bytes of a response sent with `encoding`.
    static func decoded(_ encoding: String) -> String { decodedPrefix + encoding.lowercased() }

    /// Whether a recorded encoding marks decoded bytes (which cannot be resumed by byte ranges).
    static func isDecoded(_ recorded: String?) -> Bool { recorded?.hasPrefix(decodedPrefix) ?? false }
}
