import Foundation

/// What ``DownloadManager/repair(_:pieces:)`` found and did for one completed download.
public struct RepairReport: Sendable, Hashable {
    public var id: DownloadID
    public var file: URL
    /// How many pieces the file has, and which failed their hashes (before the repair).
    public var pieceCount: Int
    public var badPieces: [Int]
    /// Body bytes fetched to repair them (each bad piece once, unless a source sent it wrong).
    public var fetchedBytes: Int64
    /// The file's SHA-256 after the repair matches the one recorded when it completed (nil: none was recorded).
    public var matchesRecordedSHA256: Bool?
}
