import Foundation

/// Keeps every path a remote client names inside the download directory: `dir` and `out` may not climb out with
/// `..`, name another absolute place, pass through a symbolic link that leads outside, or be longer than the file
/// system takes (checked before anything is created, so an over-long `dir` makes no directory at all).
///
/// This is the check at the time a download is added; a link planted below the directory later is refused when the
/// download's files are opened, renamed or removed (HaulKit's `ConfinedDirectories`).
public struct DownloadDirectoryJail: Sendable {
    /// The download directory, with symbolic links resolved.
    public let root: URL

    /// The longest name of a file or directory (`NAME_MAX` on the usual file systems).
    static let maxComponentBytes = 255
    /// The longest `out`: a name that leaves room for the longest file Haul keeps beside it (`.part.segments`).
    static let maxFileNameBytes = 255 - ".part.segments".utf8.count
    /// The longest path (`PATH_MAX` less its terminating zero).
    static let maxPathBytes = 4095
    /// The most directories `dir` may go down below the download directory.
    static let maxDepth = 32

    public init(root: URL) {
        self.root = root.standardizedFileURL.resolvingSymlinksInPath()
    }

    /// The directory `dir` names: relative to the root, or absolute but inside it. Nil `dir` is the root.
    public func directory(_ dir: String?) throws(RPCError) -> URL {
        guard let dir, !dir.isEmpty else { return root }
        try Self.checkText(dir, option: "dir")
        let candidate = dir.hasPrefix("/") ? URL(fileURLWithPath: dir) : root.appendingPathComponent(dir)
        let directory = try inside(candidate, named: dir)
        let below = directory.pathComponents.count - root.pathComponents.count
        guard below <= Self.maxDepth else {
            throw .failed("dir goes \(below) levels below the download directory: at most \(Self.maxDepth)")
        }
        // Room for a file name of the longest kind and its siblings.
        guard directory.path.utf8.count + 1 + Self.maxComponentBytes <= Self.maxPathBytes else {
            throw .failed("dir is too long: its path must leave room for a file name within \(Self.maxPathBytes) bytes")
        }
        return directory
    }

    /// The file `out` names inside `directory` (itself inside the root).
    public func file(_ out: String, in directory: URL) throws(RPCError) -> URL {
        guard !out.isEmpty, !out.hasPrefix("/") else {
            throw .failed("out must be a file name inside the download directory, got '\(out)'")
        }
        try Self.checkText(out, option: "out")
        guard let name = out.split(separator: "/").last, name.utf8.count <= Self.maxFileNameBytes else {
            throw .failed("out's file name must be at most \(Self.maxFileNameBytes) bytes")
        }
        let file = try inside(directory.appendingPathComponent(out), named: out)
        guard file.path != root.path, file.path != directory.path else {
            throw .failed("out must name a file, got '\(out)'")
        }
        guard file.path.utf8.count + ".part.segments".utf8.count <= Self.maxPathBytes,
            file.pathComponents.count - root.pathComponents.count <= Self.maxDepth + 1
        else { throw .failed("out makes a path too long or too deep") }
        return file
    }

    /// Whether the file at `url` is inside the download directory by its real path: its directory's links resolved
    /// (the file itself, if a link, is deleted as a link). What `haul.remove` may delete.
    public func holds(_ url: URL) -> Bool {
        let resolved = Self.resolvingExistingPart(of: url.deletingLastPathComponent().standardizedFileURL)
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        let parent = resolved.path.hasSuffix("/") ? resolved.path : resolved.path + "/"
        return parent.hasPrefix(rootPath) && !url.lastPathComponent.isEmpty && url.lastPathComponent != ".."
    }

    /// Refuses control characters (a NUL would cut the path short where the system reads it) and components longer
    /// than the file system takes, before anything else looks at the path.
    private static func checkText(_ text: String, option: String) throws(RPCError) {
        guard text.utf8.count <= maxPathBytes else {
            throw .failed("\(option) is longer than \(maxPathBytes) bytes")
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .failed("\(option) must not contain control characters")
        }
        guard text.split(separator: "/").allSatisfy({ $0.utf8.count <= maxComponentBytes }) else {
            throw .failed("\(option) has a name longer than \(maxComponentBytes) bytes")
        }
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
