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
    /// another download counts as taken while `isUnfinished` says that download is not complete.
    mutating func reserve(
        _ name: String, in directory: String, for id: DownloadID, isUnfinished: (DownloadID) -> Bool
    ) -> String {
        var candidate = name
        var number = 0
        while true {
            let path = (directory as NSString).appendingPathComponent(candidate)
            // The name and the files beside it (part file, journal) must all be free.
            let taken =
                FileSystem.entry(at: path) != .none || FileSystem.entry(at: path + partFileSuffix) != .none
                || FileSystem.entry(at: path + longestSiblingSuffix) != .none
                || (holders[path].map { $0 != id && isUnfinished($0) } ?? false)
            if !taken {
                holders[path] = id
                return path
            }
            number += 1
            candidate = FileNamer.alternative(name, number: number)
        }
    }
}
