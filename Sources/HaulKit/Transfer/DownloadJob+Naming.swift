import AsyncHTTPClient
import Foundation

/// Naming: a free name reserved in the download's directory, and a file already there that is kept.
extension DownloadJob {
    /// How naming the file ended.
    enum Naming {
        /// The file has its name; `fresh`: it was named now (then no part file is beside it: the reservation just
        /// looked).
        case named(fresh: Bool)
        /// A file already at the name is kept (``ExistingFilePolicy/keep``, or `-N` with a copy not newer): the
        /// download completes with it, and the record names it.
        case keptExisting
    }

    /// Names the file when it has no destination yet: a free name in its directory, reserved for the download.
    /// `journal`: false for a body held in memory, which never keeps a segment journal.
    mutating func nameIfNeeded(head: ResponseHead, url: URL?, journal: Bool = true) async throws -> Naming {
        guard record.destinationPath == nil else { return .named(fresh: false) }
        let requested = record.requestedDestination ?? .directory(environment.settings.downloadDirectory)
        guard case .directory(let directory) = requested else {
            throw DownloadError.internalError("download \(id) has no destination")
        }
        let url = url ?? URL(string: record.transfer.finalURL ?? record.url) ?? URL(string: record.url)!
        let name = FileNamer.name(contentDisposition: head.contentDisposition, url: url)
        let policy = record.options.existingFile
        let directoryPath = environment.path(of: directory)
        // Only these policies care what is there already; otherwise the reservation picks a free name.
        if policy == .keep || policy == .replaceIfNewer,
            case let named = FileSystem.child(name, of: directoryPath),
            case .regularFile(let size) = FileSystem.entry(at: named)
        {
            if policy == .keep {
                keepExisting(named, size: size)
                return .keptExisting
            }
            if policy == .replaceIfNewer, let modified = FileSystem.modificationDate(of: named),
                !Self.isNewer(head.lastModified, than: modified)
            {
                keepExisting(named, size: size)
                return .keptExisting
            }
        }
        record.destinationPath = try await environment.host.reserveDestination(
            id, in: directoryPath, name: name, replacing: policy == .replace || policy == .replaceIfNewer,
            journal: journal)
        return .named(fresh: true)
    }

    /// when the answer says the server's copy is not newer (`304`, or a `Last-Modified` not after the file's time);
    /// false to go on.
    mutating func keptAsNotNewer(_ head: ResponseHead) throws(DownloadError) -> Bool {
        guard let existingModified = machine.expectations.existingModified, let destination = record.destinationPath,
            case .regularFile(let size) = FileSystem.entry(at: destination)
        else { return false }
        guard head.status == 304 || !Self.isNewer(head.lastModified, than: existingModified) else { return false }
        keepExisting(destination, size: size)
        return true
    }

    /// Whether `lastModified` (an HTTP date) is after `date`, to the second; a missing or unreadable one counts as
    /// newer (the server does not say, so the file is fetched, as wget does).
    static func isNewer(_ lastModified: String?, than date: Date) -> Bool {
        guard let server = lastModified.flatMap(HTTPDate.parse) else { return true }
        return server.timeIntervalSince1970.rounded(.down) > date.timeIntervalSince1970.rounded(.down)
    }
}
