import Foundation

/// What a finishing request may replace at its destination: the rule that a file Haul did not put there is never
/// replaced unless the download's options say so.
extension FinishingQueue.Request {
    /// Which file found at the destination a request may replace: any, when the download's options say so;
    /// otherwise only the download's own. Any other file there appeared while the download ran: it is left as it
    /// is, and the download fails with ``DownloadError/destinationTaken(path:partPath:)``.
    enum Replacing: Sendable, Equatable {
        case any
        /// The download's own file (`identity`, `device:inode`; nil if none: see ``DownloadJob/ownFile``), or one
        /// with the very bytes being put in place (nothing is lost by replacing it).
        case own(identity: String?)

        /// Throws when something is at `destination` that may not be replaced by the file of `size` and `sha256`
        /// being put in place (`partPath`: where its bytes stay, for the message).
        func check(_ destination: String, size: Int64?, sha256: String?, partPath: String?) throws(DownloadError) {
            guard case .own(let identity) = self else { return }
            switch try FileSystem.confinedEntry(at: destination) {
            case .none, .directory:
                // Nothing there; or what a rename cannot replace (it says that a directory is in the way).
                return
            case .regularFile(let found):
                if let identity, FileFingerprint.of(path: destination)?.identity == identity { return }
                // Read whole only when the sizes agree.
                if let sha256, found == size, (try? FileDigest.sha256(ofFileAt: destination)) == sha256 { return }
            case .symbolicLink, .other:
                break
            }
            throw .destinationTaken(path: destination, partPath: partPath)
        }
    }
}
