import Foundation

/// Which download writes which file, so two downloads never write one file: one destination per path, and a name
/// chosen for a download is free on disk (with its part file and journal) and reserved by no unfinished other.
struct DestinationReservations: Sendable {
    private var holders: [String: DownloadID] = [:]

    /// The download that holds `path`, if any.
    func holder(of path: String) -> DownloadID? { holders[path] }

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
        var candidate = name
        var number = 0
        while true {
            let path = (directory as NSString).appendingPathComponent(candidate)
            // The name and the files beside it (part file, journal) must all be free.
            let taken =
                Self.occupied(path, replacingFiles: replacingFiles)
                || FileSystem.entry(at: path + partFileSuffix) != .none
                || (journal && FileSystem.entry(at: path + longestSiblingSuffix) != .none)
                || (holders[path].map { $0 != id && isUnfinished($0) } ?? false)
            if !taken {
                holders[path] = id
                return path
            }
            number += 1
            candidate = FileNamer.alternative(name, number: number)
        }
    }

    /// Whether something at `path` keeps the name from being used: anything, or (when replacing files) anything but a
    /// regular file.
    private static func occupied(_ path: String, replacingFiles: Bool) -> Bool {
        switch FileSystem.entry(at: path) {
        case .none: return false
        case .regularFile: return !replacingFiles
        default: return true
        }
    }
}
