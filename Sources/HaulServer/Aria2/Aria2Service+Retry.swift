import Foundation
import HaulKit

/// aria2's retry, as its clients do it: AriaNg and webui-aria2 read a failed download's URIs and options
/// (`tellStatus`, `getOption`), call `addUri` with them, then `removeDownloadResult` with the failed GID. aria2 starts
/// a new download under a new GID and keeps the failed result until it is removed; so does Haul.
extension Aria2Service {
    /// When `url` into `destination` is a failed download's, retires it: the download is forgotten (its partial data
    /// deleted: the new download starts over) and its result kept, reported `error`, until `removeDownloadResult`.
    /// Masked values a client copied from `getOption` (`http-passwd` `***`, a credential header's `***`) take the
    /// failed download's real ones. Returns the failed download's GID; nil when no failed download matches, and the
    /// add goes on as usual.
    func retireFailed(
        _ url: URL, _ destination: DownloadDestination, options: inout DownloadOptions
    ) async throws(RPCError) -> GID? {
        guard await manager.count(in: [.failed]) > 0 else { return nil }
        let given = Self.withoutLogin(url)
        let failed = await manager.snapshots(in: [.failed])
        guard let old = failed.first(where: { Self.withoutLogin($0.url) == given && Self.writes($0, destination) })
        else { return nil }
        options.restoreMasked(from: old.options)
        if options.credentials == nil, url.user == nil { options.credentials = old.options.credentials }
        let id = old.id
        try await managing { () async throws(DownloadError) in try await manager.remove(id) }
        let gid = GID(id)
        removed[gid] = RemovedResult(snapshot: old, at: Date(), statusName: "error")
        return gid
    }

    /// Whether `snapshot` writes where `destination` says: the same file, or a file (or a name not known yet) in the
    /// same directory.
    static func writes(_ snapshot: DownloadSnapshot, _ destination: DownloadDestination) -> Bool {
        switch destination {
        case .file(let file): return snapshot.file?.standardizedFileURL.path == file.standardizedFileURL.path
        case .directory(let directory):
            guard let file = snapshot.file else { return true }
            return Aria2Status.parent(file.standardizedFileURL.path) == directory.standardizedFileURL.path
        }
    }

    /// `url` without a user name and password (Haul keeps them apart from the URL).
    static func withoutLogin(_ url: URL) -> String {
        guard url.user != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.user = nil
        components.password = nil
        return components.url?.absoluteString ?? url.absoluteString
    }
}

extension DownloadOptions {
    /// Takes `old`'s password and credential headers where these options carry only their masked forms, as
    /// `getOption` shows them (`***`).
    mutating func restoreMasked(from old: DownloadOptions) {
        if let credentials, credentials.password == "***", let previous = old.credentials,
            previous.user == credentials.user
        {
            self.credentials = previous
        }
        headers = headers.map { header in
            old.headers.first {
                $0.name.lowercased() == header.name.lowercased() && $0.value != header.value
                    && $0.displayValue == header.value
            } ?? header
        }
    }
}
