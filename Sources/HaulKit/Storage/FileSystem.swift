import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file-system operations the engine needs, with errors mapped to ``DownloadError``.
enum FileSystem {
    /// What is at a path, without following a final symbolic link.
    enum Entry: Equatable {
        case none
        case regularFile(size: Int64)
        case directory
        case symbolicLink
        case other
    }

    static func entry(at path: String) -> Entry {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .none }
        return entry(info)
    }

    /// What is at `path`, as ``entry(at:)`` says, looked at through no symbolic link beneath a confined directory
    /// (one on the way is refused, as a rename there would be).
    static func confinedEntry(at path: String) throws(DownloadError) -> Entry {
        let parent = try directory(of: path)
        defer { parent.close() }
        var info = stat()
        guard fstatat(parent.descriptor, parent.name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return .none }
        return entry(info)
    }

    private static func entry(_ info: stat) -> Entry {
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile(size: Int64(info.st_size))
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    /// Creates `path` and its missing parents. Beneath a confined directory, through no symbolic link.
    static func createDirectory(_ path: String) throws(DownloadError) {
        if let confined = ConfinedPath.of(path) {
            guard confined.createDirectories() == 0 else { throw failure(errno, confined, operation: "mkdir") }
            return
        }
        if entry(at: path) == .directory { return }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .destinationNotWritable(
                path: path, reason: "cannot create the directory (\(error.localizedDescription))")
        }
    }

    /// Creates `path` (and missing parents) readable by its owner only (0700); an existing directory is left as
    /// it is (it may be the user's own).
    static func createPrivateDirectory(_ path: String) throws(DownloadError) {
        if entry(at: path) == .directory { return }
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .destinationNotWritable(
                path: path, reason: "cannot create the directory (\(error.localizedDescription))")
        }
    }

    /// Makes the file at `path` readable and writable by its owner only (0600), creating it empty if asked.
    static func restrictToOwner(_ path: String, creating: Bool) throws(DownloadError) {
        if creating {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw .fileSystem(errno: errno, path: path, operation: "open") }
            _ = systemClose(fd)
        }
        guard chmod(path, 0o600) == 0 || errno == ENOENT else {
            throw .fileSystem(errno: errno, path: path, operation: "chmod")
        }
    }

    /// Atomically moves `source` over `destination` (replacing a file or symbolic link there, never following it).
    /// When the file at `path` was last modified; nil when there is none.
    static func modificationDate(of path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// Renames a file over `destination` (replacing a file there); beneath a confined directory, through no symbolic
    /// link. The destination is looked at only when the rename fails, to say that a directory is in the way.
    static func rename(_ source: String, to destination: String) throws(DownloadError) {
        let code: Int32
        if ConfinedPath.of(source) == nil, ConfinedPath.of(destination) == nil {
            guard systemRename(source, destination) != 0 else { return }
            code = errno
        } else {
            let from = try directory(of: source)
            defer { from.close() }
            let to = try directory(of: destination)
            defer { to.close() }
            guard renameat(from.descriptor, from.name, to.descriptor, to.name) != 0 else { return }
            code = errno
        }
        if entry(at: destination) == .directory {
            throw .destinationNotWritable(path: destination, reason: "a directory is in the way")
        }
        throw .fileSystem(errno: code, path: destination, operation: "rename")
    }

    /// Deletes a file or symbolic link if present; never a directory. Beneath a confined directory, through no
    /// symbolic link (a missing directory on the way means there is nothing to delete).
    static func removeFile(_ path: String) throws(DownloadError) {
        if let confined = ConfinedPath.of(path) {
            let parent = confined.openParentDirectory()
            guard parent >= 0 else {
                if errno == ENOENT { return }
                throw failure(errno, confined, operation: "delete")
            }
            defer { _ = systemClose(parent) }
            guard unlinkat(parent, confined.name, 0) == 0 || errno == ENOENT else {
                throw .fileSystem(errno: errno, path: path, operation: "delete")
            }
            return
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw .fileSystem(errno: errno, path: path, operation: "delete")
        }
    }

    /// Opens `path` with `flags` and `mode` (as `open(2)`: a descriptor, or -1 with `errno`); beneath a confined
    /// directory, through no symbolic link (`O_NOFOLLOW` and `O_CLOEXEC` added there).
    static func openFile(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        if let confined = ConfinedPath.of(path) { return confined.openFile(flags, mode) }
        return open(path, flags, mode)
    }

    /// Why opening `path` failed with `code` when a symbolic link (or, beneath a confined directory, `..` or a
    /// non-directory) is the cause; nil for other causes.
    static func linkRefusal(_ path: String, _ code: Int32) -> DownloadError? {
        if let confined = ConfinedPath.of(path) { return confined.refusal(code) }
        guard code == ELOOP else { return nil }
        return .destinationNotWritable(path: path, reason: "it is a symbolic link, which Haul never follows")
    }

    /// A directory open for the `*at` system calls, and a name in it.
    struct ParentDirectory {
        /// The directory's descriptor, or `AT_FDCWD` for a path beneath no confined directory (then ``name`` is the
        /// whole path).
        let descriptor: Int32
        let name: String

        func close() {
            if descriptor >= 0 { _ = systemClose(descriptor) }
        }
    }

    /// The directory `path` is in, opened through no symbolic link beneath a confined directory; elsewhere the
    /// current directory with the whole path.
    static func directory(of path: String) throws(DownloadError) -> ParentDirectory {
        guard let confined = ConfinedPath.of(path) else { return ParentDirectory(descriptor: AT_FDCWD, name: path) }
        let descriptor = confined.openParentDirectory()
        guard descriptor >= 0 else { throw failure(errno, confined, operation: "open the directory of") }
        return ParentDirectory(descriptor: descriptor, name: confined.name)
    }

    /// The error for `code` from an operation on a confined path.
    private static func failure(_ code: Int32, _ confined: ConfinedPath, operation: String) -> DownloadError {
        confined.refusal(code) ?? .fileSystem(errno: code, path: confined.path, operation: operation)
    }

    /// Makes a rename or creation inside `directory` durable.
    static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_CLOEXEC | O_DIRECTORY)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        _ = systemClose(fd)
    }

    /// `name` in `directory`: Foundation's `appendingPathComponent`. A plain directory (not empty, no trailing or
    /// doubled slash) and a plain name (not empty, no slash) are joined with one slash, without Foundation's
    /// normalisation and bridging (three allocations for each name a reservation tries).
    static func child(_ name: String, of directory: String) -> String {
        let slash = UInt8(ascii: "/")
        let plainName = !name.isEmpty && !name.utf8.contains(slash)
        let plainDirectory =
            plainName
            && directory.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
                guard let last = bytes.last, last != slash else { return false }
                return !hasDoubledSlash(bytes)
            } == true
        if plainDirectory {
            var path = directory
            path.reserveCapacity(directory.utf8.count + 1 + name.utf8.count)
            path += "/"
            path += name
            return path
        }
        return (directory as NSString).appendingPathComponent(name)
    }

    /// The directory part of a path.
    static func parent(of path: String) -> String {
        // A plain path (no trailing or doubled slash, not at the root) is cut at its last slash: Foundation's
        // normalisation cost 1% of the CPU of a small download, asked twice each. Its bytes are walked once, in
        // place (a generic walk over the string's view cost another 0.8%).
        let slash = UInt8(ascii: "/")
        let plain = path.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            guard let last = bytes.lastIndex(of: slash), last > 0, last < bytes.count - 1, !hasDoubledSlash(bytes)
            else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<last]), as: UTF8.self)
        }
        if let parent = plain ?? nil { return parent }
        return (path as NSString).deletingLastPathComponent
    }

    /// Whether `bytes` hold two slashes in a row (a path Foundation would normalise).
    private static func hasDoubledSlash(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let slash = UInt8(ascii: "/")
        var previous: UInt8 = 0
        for byte in bytes {
            if byte == slash && previous == slash { return true }
            previous = byte
        }
        return false
    }
}

private func systemRename(_ from: String, _ to: String) -> Int32 {
    #if canImport(Glibc)
    Glibc.rename(from, to)
    #else
    Darwin.rename(from, to)
    #endif
}
