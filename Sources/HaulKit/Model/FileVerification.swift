import Foundation

/// What reading a completed download's file back found (``DownloadManager/verify(_:)``).
public struct FileVerification: Sendable, Hashable {
    /// The outcome for one download.
    public enum Result: Sendable, Hashable {
        /// The file has the SHA-256 recorded when Haul completed it.
        case matches
        /// The file's bytes differ: its SHA-256 is `actual`.
        case differs(actual: String)
        /// No file is at the path (or something other than a file is).
        case missing(String)
        /// The download completed before Haul kept digests: only its size was compared (`sizeMatches`).
        case noDigest(sizeMatches: Bool)
        /// The download is not completed, so there is no file to read.
        case notCompleted(DownloadState)
        /// The file could not be read.
        case unreadable(DownloadError)
    }

    public var id: DownloadID
    /// The file read (nil before the download was named).
    public var file: URL?
    /// The SHA-256 recorded when it completed.
    public var expected: String?
    public var result: Result
    /// For a file that differs and has piece hashes (a Metalink's): the pieces that fail theirs, which `haul repair`
    /// fetches again alone.
    public var badPieces: [Int]?

    /// True when the file is the one Haul completed (or, without a digest, at least of its size).
    public var isGood: Bool {
        switch result {
        case .matches, .noDigest(sizeMatches: true), .notCompleted: true
        case .differs, .missing, .noDigest(sizeMatches: false), .unreadable: false
        }
    }
}
