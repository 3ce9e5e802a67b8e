import Foundation

/// Which download writes which file, so two downloads never write one file: one destination per path, and a name
/// chosen for a download is free on disk (with its part file and journal) and reserved by no unfinished other.
///
/// After ``listingThreshold`` names in one directory, the names on disk come from a ``DirectoryListing`` where the
/// system keeps one current, instead of two or three lookups per name.
struct DestinationReservations {
    private var holders: [String: DownloadID] = [:]
    #if os(Linux)
    /// Names reserved by lookups per directory since it was last listed (or since its listing was dropped).
    private var lookups: [String: Int] = [:]
    #endif
    /// The directories listed; shared with the finishing group.
    let listings: DirectoryListings

    init(listings: DirectoryListings = DirectoryListings()) {
        self.listings = listings
    }

    /// Names reserved in one directory by lookups before it is listed: a listing reads the whole directory once.
    static let listingThreshold = 64
    /// Directories whose lookups are counted at once: a daemon may save into many over its life.
    static let countedLimit = 1_024

    /// The download that holds `path`, if any.
    func holder(of path: String) -> DownloadID? { holders[path] }

    /// Whether names in `directory` are found free from its listing (see ``listingThreshold``).
    func isListed(_ directory: String) -> Bool {
        #if os(Linux)
        listings[directory] != nil
        #else
        false
        #endif
    }

    /// How many directories' lookups are being counted toward a listing (at most ``countedLimit``).
    var countedDirectories: Int {
        #if os(Linux)
        lookups.count
        #else
        0
        #endif
    }

    /// Records that `id` writes (or wrote) `path`.
    mutating func hold(_ path: String, for id: DownloadID) { holders[path] = id }

    /// Gives up `path` if `id` holds it.
    mutating func release(_ path: String, of id: DownloadID) {
        if holders[path] == id { holders[path] = nil }
    }

    /// Picks a free name in `directory` for `name` (`name (1).ext`, …) and reserves it for `id`. A path held by
    /// another download counts as taken while `isUnfinished` says that download is not complete. With
    /// `replacingFiles`, a regular file at the name itself does not make it taken (it is replaced at the end).
    /// `journal`: the download may keep a segment journal beside its part file, so that name must be free too. A small
    /// body held in memory never has one: its journal name is not looked up (the three lookups in a large directory
    /// were a tenth of a small download's work on its event loop).
    mutating func reserve(
        _ name: String, in directory: String, for id: DownloadID, replacingFiles: Bool = false, journal: Bool = true,
        isUnfinished: (DownloadID) -> Bool
    ) -> String {
        let listed = listedEntries(in: directory)
        var candidate = name
        var number = 0
        while true {
            let path = FileSystem.child(candidate, of: directory)
            // The name and the files beside it (part file, journal) must all be free.
            let entry = { (suffix: String) in listed(candidate + suffix) ?? FileSystem.entry(at: path + suffix) }
            let taken =
                Self.occupied(entry(""), replacingFiles: replacingFiles)
                || entry(partFileSuffix) != .none
                || (journal && entry(longestSiblingSuffix) != .none)
                || (holders[path].map { $0 != id && isUnfinished($0) } ?? false)
            if !taken {
                holders[path] = id
                return path
            }
            number += 1
            candidate = FileNamer.alternative(name, number: number)
        }
    }

    /// Whether `entry` keeps its name from being used: anything, or (when replacing files) anything but a regular
    /// file.
    private static func occupied(_ entry: FileSystem.Entry, replacingFiles: Bool) -> Bool {
        switch entry {
        case .none: return false
        case .regularFile: return !replacingFiles
        default: return true
        }
    }

    /// What a name in `directory` is known to be without a lookup: `.none` for a name its listing does not hold,
    /// nil when it must be looked up (no listing, a name the listing holds, or one that is not a plain name). Counts
    /// the reservation, and lists the directory once enough names were looked up in it.
    private mutating func listedEntries(in directory: String) -> (String) -> FileSystem.Entry? {
        #if os(Linux)
        if let listing = listings[directory] {
            if listing.refresh() {
                return { name in listing.showsAbsent(name) ? FileSystem.Entry.none : nil }
            }
            listings.drop(listing)
        }
        if lookups[directory] == nil, lookups.count >= Self.countedLimit { lookups = [:] }
        lookups[directory, default: 0] += 1
        if lookups[directory]! >= Self.listingThreshold {
            lookups[directory] = nil
            listings.list(directory)
        }
        #endif
        return { _ in nil }
    }
}
