import Foundation

/// The headers of one response that matter for resuming, extracted once.
struct ResponseHead: Sendable, Equatable {
    var status: Int
    var reason: String
    var contentLength: Int64?
    var contentRange: String?
    var etag: String?
    var lastModified: String?
    var contentEncoding: String?
    var contentDisposition: String?
    var retryAfter: Duration?
    /// The digests the response states, of the whole file and of its own content.
    var digests = ServerDigests()
    /// The mirrors it names (RFC 6249's `Link: <…>; rel=duplicate`), best first.
    var duplicates: [String] = []

    var validator: ResourceValidator {
        ResourceValidator(
            etag: etag, lastModified: lastModified, totalBytes: nil,
            contentEncoding: contentEncoding.map { $0.lowercased() })
    }
}
