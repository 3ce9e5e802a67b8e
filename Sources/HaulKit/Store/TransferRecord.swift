/// The columns a running job owns: the part file, the validators it was written against, and the last checkpoint.
///
/// One value inside ``DownloadRecord``: the job hands it back whole when it ends, and the manager takes it in one
/// assignment.
struct TransferRecord: Sendable, Equatable {
    /// True once validators were recorded and the part file holds this record's bytes; a part file without this
    /// is never trusted.
    var hasPartData: Bool = false
    /// Bumped each time the part file is cut back; a checkpoint of an older generation is discarded.
    var generation: Int64 = 0
    /// Bytes that were `fdatasync`ed before this value was committed: true even after an OS crash.
    var durableBytes: Int64 = 0
    /// The boot in which the part file was last written; while it is unchanged, every byte in the file is trusted.
    var bootID: String?
    var etag: String?
    var lastModified: String?
    var totalBytes: Int64?
    var contentEncoding: String?
    var finalURL: String?
    /// Set after the complete part file was synced and verified, just before it is renamed into place.
    var finalizing: Bool = false
    /// The plan of a multi-connection download as of the last checkpoint (bytes synced per segment); nil for one
    /// connection.
    var segments: [Segment]?

    /// Bytes on disk as of the last checkpoint.
    var checkpointedBytes: Int64 { segments.map { $0.reduce(0) { $0 + $1.written } } ?? durableBytes }

    /// The validators the part file was written against; nil while it holds none of this record's bytes.
    var validator: ResourceValidator? {
        guard hasPartData else { return nil }
        return ResourceValidator(
            etag: etag, lastModified: lastModified, totalBytes: totalBytes, contentEncoding: contentEncoding)
    }

    mutating func record(_ validator: ResourceValidator) {
        etag = validator.etag
        lastModified = validator.lastModified
        totalBytes = validator.totalBytes
        contentEncoding = validator.contentEncoding
    }
}
