import Foundation

/// Keeps every path a remote client names inside the download directory: `dir` and `out` may not climb out with
/// `..`, name another absolute place, or pass through a symbolic link that leads outside.
public struct DownloadDirectoryJail: Sendable {
    /// The download directory, with symbolic links resolved.
    public let root: URL

    public init(root: URL) {
        self.root = root.standardizedFileURL.resolvingSymlinksInPath()
    }

    /// The directory `dir` names: relative to the root, or absolute but inside it. Nil `dir` is the root.
    public func directory(_ dir: String?) throws(RPCError) -> URL {
        guard let dir, !dir.isEmpty else { return root }
        let candidate = dir.hasPrefix("/") ? URL(fileURLWithPath: dir) : root.appendingPathComponent(dir)
        return try inside(candidate, named: dir)
    }

    /// The file `out` names inside `directory` (itself inside the root).
    public func file(_ out: String, in directory: URL) throws(RPCError) -> URL {
        guard !out.isEmpty, !out.hasPrefix("/") else {
            throw .failed("out must be a file name inside the download directory, got '\(out)'")
        }
        let file = try inside(directory.appendingPathComponent(out), named: out)
        guard file.path != root.path, file.path != directory.path else {
            throw .failed("out must name a file, got '\(out)'")
        }
        return file
    }

    /// `url` with `..` removed and links resolved as far as the path exists, if it stays inside the root.
    private func inside(_ url: URL, named given: String) throws(RPCError) -> URL {
        if url.pathComponents.contains("..") {
            throw .failed("'\(given)' climbs out of the download directory with '..'")
        }
        let resolved = Self.resolvingExistingPart(of: url.standardizedFileURL)
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        guard resolved.path == root.path || resolved.path.hasPrefix(rootPath) else {
            throw .failed("'\(given)' is outside the download directory \(root.path)")
        }
        return resolved
    }

    /// Resolves symbolic links in the longest existing prefix of `url` and appends the rest.
    private static func resolvingExistingPart(of url: URL) -> URL {
        var existing = url
        var rest: [String] = []
        while existing.path != "/", !FileManager.default.fileExists(atPath: existing.path) {
            rest.insert(existing.lastPathComponent, at: 0)
            existing.deleteLastPathComponent()
        }
        var resolved = existing.resolvingSymlinksInPath()
        for component in rest { resolved.appendPathComponent(component) }
        return resolved
    }
}
