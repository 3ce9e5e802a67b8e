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
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile(size: Int64(info.st_size))
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    /// Creates `path` and its missing parents.
    static func createDirectory(_ path: String) throws(DownloadError) {
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

    /// Renames a file over `destination` (replacing a file there). The destination is looked at only when the
    /// rename fails, to say that a directory is in the way.
    static func rename(_ source: String, to destination: String) throws(DownloadError) {
        guard systemRename(source, destination) != 0 else { return }
        let code = errno
        if entry(at: destination) == .directory {
            throw .destinationNotWritable(path: destination, reason: "a directory is in the way")
        }
        throw .fileSystem(errno: code, path: destination, operation: "rename")
    }

    /// Deletes a file or symbolic link if present; never a directory.
    static func removeFile(_ path: String) throws(DownloadError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw .fileSystem(errno: errno, path: path, operation: "delete")
        }
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
