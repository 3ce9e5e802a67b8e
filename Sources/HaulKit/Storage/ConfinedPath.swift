import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A path beneath a confined directory (``ConfinedDirectories``), opened relative to a descriptor of that directory
/// without following a symbolic link on the way.
///
/// On Linux 5.6 and later one `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` resolves the whole path; where
/// the kernel (or a container's system-call filter) lacks it, the path is walked one component at a time with
/// `openat(O_NOFOLLOW)`, each directory opened from the descriptor of the one before, which holds on every POSIX
/// system. Either way a link anywhere below the confined directory fails the operation with `ELOOP`, and `..` with
/// `EXDEV`; every function returns -1 with `errno` set, as the system calls do.
struct ConfinedPath {
    /// The whole path, for messages.
    let path: String
    /// The confined directory it is beneath.
    let root: String
    /// The components below the root, `.` and empty ones left out.
    let components: [String]

    /// The confined form of `path`; nil when it is beneath no confined directory.
    static func of(_ path: String) -> ConfinedPath? {
        guard let (root, below) = ConfinedDirectories.split(path) else { return nil }
        let components = below.split(separator: "/").filter { $0 != "." }.map(String.init)
        guard !components.isEmpty else { return nil }
        return ConfinedPath(path: path, root: root, components: components)
    }

    /// Whether a component climbs with `..` (never resolved: the walk could not tell where it leads).
    private var climbs: Bool { components.contains("..") }

    /// Opens the file itself with `flags` (`O_NOFOLLOW` and `O_CLOEXEC` added).
    func openFile(_ flags: Int32, _ mode: mode_t) -> Int32 {
        withRoot { root in Self.openBeneath(root, components, flags | O_NOFOLLOW | O_CLOEXEC, mode) }
    }

    /// Opens the path as a directory.
    func openDirectory() -> Int32 {
        openFile(O_RDONLY | O_DIRECTORY, 0)
    }

    /// Opens the directory the path is in; its last component is ``name``.
    func openParentDirectory() -> Int32 {
        withRoot { root in
            components.count == 1
                ? dup(root)
                : Self.openBeneath(
                    root, Array(components.dropLast()), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        }
    }

    /// The last component.
    var name: String { components[components.count - 1] }

    /// Creates the path and its missing parents as directories (0777 less the umask, as `mkdir -p`), each created
    /// and then opened from the one before without following a link.
    func createDirectories() -> Int32 {
        withRoot { root in
            var current = dup(root)
            for component in components {
                guard current >= 0 else { return -1 }
                if mkdirat(current, component, 0o777) != 0, errno != EEXIST {
                    return Self.closing(current, result: -1)
                }
                let next = openat(current, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                _ = Self.closing(current, result: 0)
                current = next
            }
            return Self.closing(current, result: current >= 0 ? 0 : -1)
        }
    }

    /// Why an operation on the path failed with `code`, when the cause is the confinement: a link, `..`, or
    /// something other than a directory on the way.
    func refusal(_ code: Int32) -> DownloadError? {
        // A link opened as a directory without being followed fails with ENOTDIR rather than ELOOP.
        guard code == ELOOP || code == EXDEV || (code == ENOTDIR && hasLinkOnTheWay) else {
            guard code == ENOTDIR else { return nil }
            return .destinationNotWritable(path: path, reason: "something other than a directory is on its way")
        }
        return .destinationNotWritable(
            path: path, reason: "a symbolic link or '..' is on its way below \(root), where haul serve follows none")
    }

    /// Whether a component below the root is a symbolic link now (to word an error; the operations never rely on it).
    private var hasLinkOnTheWay: Bool {
        var prefix = root
        for component in components {
            prefix += "/" + component
            var info = stat()
            guard lstat(prefix, &info) == 0 else { return false }
            if info.st_mode & S_IFMT == S_IFLNK { return true }
        }
        return false
    }

    /// Runs `body` with a descriptor of the root (closed after); -1 and `errno` when the root cannot be opened or the
    /// path climbs.
    private func withRoot(_ body: (Int32) -> Int32) -> Int32 {
        if climbs {
            errno = EXDEV
            return -1
        }
        let descriptor = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return -1 }
        return Self.closing(descriptor, result: body(descriptor))
    }

    /// Closes `descriptor` and returns `result`, keeping the `errno` of the operation before.
    private static func closing(_ descriptor: Int32, result: Int32) -> Int32 {
        let code = errno
        if descriptor >= 0 { _ = systemClose(descriptor) }
        errno = code
        return result
    }

    /// Opens `components` beneath the directory `root` with `flags` (which include `O_NOFOLLOW`).
    private static func openBeneath(_ root: Int32, _ components: [String], _ flags: Int32, _ mode: mode_t) -> Int32 {
        #if os(Linux)
        if let descriptor = Openat2.open(root, components.joined(separator: "/"), flags, mode) { return descriptor }
        #endif
        var current = root
        for component in components.dropLast() {
            let next = openat(current, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if current != root { _ = closing(current, result: 0) }
            guard next >= 0 else { return -1 }
            current = next
        }
        let descriptor = openat(current, components[components.count - 1], flags, mode)
        return current == root ? descriptor : closing(current, result: descriptor)
    }
}

#if os(Linux)
/// Linux's `openat2(2)`, called through `syscall(2)` (the C library may not wrap it, and Swift cannot call the
/// variadic `syscall` directly: it is looked up and called with fixed arguments, as the calling conventions of the
/// architectures Swift runs on on Linux allow).
enum Openat2 {
    /// `struct open_how`.
    private struct How {
        var flags: UInt64
        var mode: UInt64
        var resolve: UInt64
    }

    /// `SYS_openat2`: the same number on every architecture (system calls added since Linux 5.1 share one table).
    private static let number = 437
    private static let resolveNoSymlinks: UInt64 = 0x04
    private static let resolveBeneath: UInt64 = 0x08
    private typealias SystemCall =
        @convention(c) (Int, Int32, UnsafePointer<CChar>, UnsafeRawPointer, Int) -> Int

    private static let systemCall: SystemCall? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syscall") else { return nil }
        return unsafeBitCast(symbol, to: SystemCall.self)
    }()

    /// Whether the kernel answers `openat2`: tried once on `/`.
    static let isAvailable: Bool = {
        guard let descriptor = call(-100, "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0), descriptor >= 0 else {
            return false
        }
        _ = systemClose(descriptor)
        return true
    }()

    /// Opens `relative` beneath `directory` refusing links and `..` escapes: the descriptor, or -1 with `errno`; nil
    /// where the kernel has no `openat2` (the caller walks instead).
    static func open(_ directory: Int32, _ relative: String, _ flags: Int32, _ mode: mode_t) -> Int32? {
        guard isAvailable else { return nil }
        // The kernel answers EAGAIN when a rename elsewhere raced with the resolution: try again a few times.
        for _ in 0..<8 {
            guard let descriptor = call(directory, relative, flags, mode) else { return nil }
            if descriptor >= 0 || errno != EAGAIN { return descriptor }
        }
        return -1
    }

    private static func call(_ directory: Int32, _ relative: String, _ flags: Int32, _ mode: mode_t) -> Int32? {
        guard let systemCall else { return nil }
        let creates = flags & O_CREAT != 0 || flags & 0o20000000 != 0
        var how = How(
            flags: UInt64(UInt32(bitPattern: flags)), mode: creates ? UInt64(mode) : 0,
            resolve: resolveBeneath | resolveNoSymlinks)
        let result = relative.withCString { path in
            withUnsafePointer(to: &how) { systemCall(number, directory, path, $0, MemoryLayout<How>.size) }
        }
        if result < 0, errno == ENOSYS || errno == EPERM { return nil }
        return Int32(result)
    }
}
#endif
