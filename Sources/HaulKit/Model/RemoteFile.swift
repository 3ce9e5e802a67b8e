import Foundation

/// What a server says about a URL without the file being downloaded (``DownloadManager/probe(_:options:)``, the CLI's
/// `--spider`).
public struct RemoteFile: Sendable, Hashable {
    /// The URL asked about.
    public var url: URL
    /// Where the answer came from, after redirects.
    public var finalURL: URL
    /// The status of the final answer (`206` or `200`).
    public var status: Int
    /// The file's length, when the server told it.
    public var size: Int64?
    /// Whether the server answers range requests: a download can resume and use several connections.
    public var acceptsRanges: Bool
    public var etag: String?
    public var lastModified: String?
    /// The name a download into a directory would get (from `Content-Disposition`, else the URL).
    public var suggestedName: String
}
