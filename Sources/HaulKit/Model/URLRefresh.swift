import Foundation

/// What a ``DownloadManager/Configuration/urlProvider`` is asked when a download's URL stops working: a signed URL
/// (S3, GCS, a CDN token) that expired mid-download answers 401, 403 or 410.
public struct URLRefresh: Sendable, Hashable {
    /// The download.
    public var id: DownloadID
    /// The URL it was added with.
    public var url: URL
    /// The URL that was refused (the added one, or a fresh one given before).
    public var refusedURL: URL
    /// The status it was refused with.
    public var status: Int

    public init(id: DownloadID, url: URL, refusedURL: URL, status: Int) {
        self.id = id
        self.url = url
        self.refusedURL = refusedURL
        self.status = status
    }
}

/// Gives a fresh URL for the same file, or nil when there is none (the download then fails with the refusal).
/// The download continues from its bytes on disk when the fresh URL serves the same representation (its validator
/// holds); otherwise it starts again, never splicing two versions.
public typealias URLProvider = @Sendable (URLRefresh) async -> URL?
