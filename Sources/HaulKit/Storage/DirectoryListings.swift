import Synchronization

/// The directories whose names are kept listed (``DirectoryListing``, Linux), shared by the reservations, which list
/// and drop them, and the finishing group, which checks through them that nothing appeared at a held body's part
/// path: one refresh per directory for the whole group, not one lookup per file (2% of a small download's CPU).
final class DirectoryListings: Sendable {
    #if os(Linux)
    private let byDirectory = Mutex<[String: DirectoryListing]>([:])
    #endif

    /// Directories listed at once; each holds a notice queue (a descriptor) and its names.
    static let limit = 8

    init() {}

    #if os(Linux)
    /// The listing of `directory`, if it is listed.
    subscript(directory: String) -> DirectoryListing? { byDirectory.withLock { $0[directory] } }

    /// Lists `directory` (nothing where it cannot be listed), in place of another when ``limit`` are listed.
    func list(_ directory: String) {
        guard let listing = DirectoryListing(path: directory) else { return }
        byDirectory.withLock { listings in
            if listings[directory] == nil, listings.count >= Self.limit, let any = listings.keys.first {
                listings[any] = nil
            }
            listings[directory] = listing
        }
    }

    /// Stops listing `directory`, if `listing` is still its listing.
    func drop(_ listing: DirectoryListing) {
        byDirectory.withLock { listings in
            if listings[listing.path] === listing { listings[listing.path] = nil }
        }
    }
    #endif

    /// Whether the listing of each path's directory shows nothing at it: false where that must be looked up (no
    /// listing, or the listing holds the name). Each listing is refreshed once.
    func showFree(_ paths: [String]) -> [Bool] {
        #if os(Linux)
        var refreshed: [String: DirectoryListing?] = [:]
        return paths.map { path in
            guard let (directory, name) = Self.split(path) else { return false }
            let listing: DirectoryListing?
            if let known = refreshed[directory] {
                listing = known
            } else {
                listing = self[directory].flatMap { listing in
                    if listing.refresh() { return listing }
                    drop(listing)
                    return nil
                }
                refreshed[directory] = .some(listing)
            }
            return listing?.showsAbsent(name) ?? false
        }
        #else
        return paths.map { _ in false }
        #endif
    }

    /// A path's directory (as a listing is named) and its last component; nil for a path with no directory part.
    private static func split(_ path: String) -> (directory: String, name: String)? {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let directory = String(path[..<slash])
        guard !directory.isEmpty else { return nil }
        return (directory, String(path[path.utf8.index(after: slash)...]))
    }
}
