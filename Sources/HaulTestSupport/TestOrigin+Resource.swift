import Foundation

extension TestOrigin {
    /// A file the origin serves at a path.
    public struct Resource: Sendable {
        public var size: Int
        /// Which ``TestContent`` version is served; bump it to change the file.
        public var version: Int = 0
        /// Send ETag and Last-Modified.
        public var sendsValidators = true
        /// Keep the same ETag and Last-Modified whatever the version (a server that lies).
        public var fixedValidators = false
        public var contentDisposition: String?
        public var contentEncoding: String?
        /// Chunked transfer encoding without Content-Length.
        public var chunked = false
        /// Extra response headers.
        public var headers: [(String, String)] = []
        /// Serve the content gzip-compressed (a real gzip stream) with `Content-Encoding: gzip`, whatever the
        /// request's `Accept-Encoding` (a server that compresses unasked); ranges count the compressed bytes.
        public var gzipped = false
        /// The last this many bytes are zeros (the tail of a disk image, say).
        public var zeroTail = 0
        /// Bytes served wrong in this range of offsets (each XORed with 0x5A): a mirror with a bad copy, a disk that
        /// flipped bits. Validators and length stay the same.
        public var corrupted: Range<Int>?
        /// Credentials a request must carry, else `401` with a challenge.
        public var authentication: Authentication?
        /// A `name=value` the request's `Cookie` header must hold, else `403`.
        public var requiredCookie: String?
        /// The `token=` query values that open the file (a signed URL); any other, or none, gets `403`, as an
        /// expired S3 link does. Nil: no token needed.
        public var validTokens: Set<String>?
        /// Bytes served instead of ``TestContent`` (a Metalink document, say); `size` is ignored.
        public var body: [UInt8]?
        /// Digest headers sent with every response (``TestOrigin/DigestHeader``), right or wrong.
        public var digests: [TestOrigin.DigestField] = []

        public init(size: Int) { self.size = size }

        public var etag: String { fixedValidators ? "\"fixed\"" : "\"v\(version)-\(size)\"" }
        public var lastModified: String {
            let seconds = fixedValidators ? 1_700_000_000 : 1_700_000_000 + version * 3600
            return TestOrigin.httpDate(Date(timeIntervalSince1970: TimeInterval(seconds)))
        }
    }
}
