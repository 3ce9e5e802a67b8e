import Foundation

/// How many bytes of a completed file one source served: the download's URL, a mirror, or a mirror that took over
/// from it.
public struct DownloadSourceBytes: Sendable, Hashable, Codable {
    public var url: URL
    public var bytes: Int64

    public init(url: URL, bytes: Int64) {
        self.url = url
        self.bytes = bytes
    }
}
