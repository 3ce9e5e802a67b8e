import Foundation

/// Where a download's file goes.
public enum DownloadDestination: Sendable, Hashable, Codable {
    /// Exactly this file. A relative path is resolved against the manager's download directory.
    case file(URL)
    /// A file in this directory, named from `Content-Disposition` or the URL, never outside it.
    case directory(URL)
}
