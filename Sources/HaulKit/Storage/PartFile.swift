import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open part file: positioned writes straight from network buffers, reads for verification, and syncs.
///
/// Opening never follows a symbolic link at the path. The descriptor may be used from several tasks at once
/// (`pwrite`, `pread` and `fdatasync` are thread-safe); ``close()`` must come after every other use.
final class PartFile: Sendable {
    let path: String
    private let descriptor: Int32
    /// The device (file system) the file is on.
    let device: UInt64

    /// The file's size, modification time and identity now (without a digest).
    var fingerprint: FileFingerprint? { FileFingerprint.of(descriptor: descriptor) }
    /// Whether the file has no name yet (see ``unnamed(in:)``); `path` is then its directory.
    let isUnnamed: Bool

    /// How to open a part file.
    enum Mode: Sendable {
        /// Create a new file; fails with ``DownloadError/Code/destinationInUse`` if anything is at the path
        /// (`O_EXCL`: another process created it first).
        case createNew
        /// Open the file of an earlier run, creating it if it is missing.
        case continueExisting
        /// Open a file that exists without a record of ours and empty it (a leftover nobody writes any more).
        case reuseLeftover
    }

    /// Opens the regular file at `path` (never following a symbolic link) and takes its write lock, so that no
    /// other process or manager writes it at the same time; the lock goes with ``close()`` or the process.
    init(path: String, mode: Mode) throws(DownloadError) {
        self.path = path
        var flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW
        if case .createNew = mode { flags |= O_EXCL }
        let fd = PartFile.retryingInterrupts { FileSystem.openFile(path, flags, 0o644) }
        guard fd >= 0 else {
            let code = errno
            if let refusal = FileSystem.linkRefusal(path, code) { throw refusal }
            if code == EEXIST { throw .destinationInUse(path: path, by: "a file created at the same moment") }
            throw .fileSystem(errno: code, path: path, operation: "open")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            _ = systemClose(fd)
            throw .destinationNotWritable(path: path, reason: "it is not a regular file")
        }
        guard FileLock.tryLock(fd, start: 0, length: 0) else {
            _ = systemClose(fd)
            throw .destinationInUse(path: path, by: "another download (in this or another process)")
        }
        if case .continueExisting = mode, !Self.names(path, info) {
            // Its writer finished and renamed it between the open and the lock: this is its final file now.
            _ = systemClose(fd)
            throw .destinationInUse(path: path, by: "another download, which finished it at that moment")
        }
        if case .reuseLeftover = mode, ftruncate(fd, 0) != 0 {
            let code = errno
            _ = systemClose(fd)
            throw .fileSystem(errno: code, path: path, operation: "truncate")
        }
        self.descriptor = fd
        self.device = UInt64(info.st_dev)
        self.isUnnamed = false
    }

    /// Whether `path` still names the file `opened` describes.
    private static func names(_ path: String, _ opened: stat) -> Bool {
        var now = stat()
        return lstat(path, &now) == 0 && now.st_dev == opened.st_dev && now.st_ino == opened.st_ino
    }

    private init(unnamed descriptor: Int32, in directory: String, device: UInt64) {
        self.path = directory
        self.descriptor = descriptor
        self.device = device
        self.isUnnamed = true
    }

    /// A new file with no name in `directory` (Linux `O_TMPFILE`): nothing is at any path until ``link(as:)`` names
    /// it, and a crash before leaves nothing behind. Nobody else can open it, so it takes no lock. Nil where the
    /// system or the file system has no such files, or they cannot be named afterwards (no `/proc`).
    static func unnamed(in directory: String) -> PartFile? {
        #if os(Linux)
        guard canNameUnnamedFiles else { return nil }
        let fd: Int32
        if let confined = ConfinedPath.of(directory) {
            // Made in the directory's descriptor, opened through no link (see ``ConfinedDirectories``).
            let parent = confined.openDirectory()
            guard parent >= 0 else { return nil }
            fd = retryingInterrupts { openat(parent, ".", O_RDWR | O_CLOEXEC | unnamedFileFlag, 0o644) }
            _ = systemClose(parent)
        } else {
            fd = retryingInterrupts { open(directory, O_RDWR | O_CLOEXEC | unnamedFileFlag, 0o644) }
        }
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            _ = systemClose(fd)
            return nil
        }
        return PartFile(unnamed: fd, in: directory, device: UInt64(info.st_dev))
        #else
        return nil
        #endif
    }

    /// Gives an unnamed file its name: `path`, which must be free (nothing is replaced). Sync the file first, and
    /// its directory after, as for a rename.
    ///
    /// Links the descriptor itself (`AT_EMPTY_PATH`: Linux 6.10 and later allow it to the process that opened the
    /// file), else its `/proc/self/fd` link, whose path walk cost 1.7% of a small download's CPU.
    /// Beneath a confined directory, the name is made in its directory's descriptor, opened through no link.
    func link(as path: String) throws(DownloadError) {
        #if os(Linux)
        let directory = try FileSystem.directory(of: path)
        defer { directory.close() }
        if Self.linksDescriptors.load(ordering: .relaxed) {
            if linkat(descriptor, "", directory.descriptor, directory.name, Self.emptyPath) == 0 { return }
            let code = errno
            // Refused for want of a privilege (ENOENT before 6.10): named through /proc from now on, if that works.
            guard code == ENOENT || code == EPERM || code == EINVAL else {
                throw .fileSystem(errno: code, path: path, operation: "link")
            }
            try linkThroughProc(as: path, in: directory)
            Self.linksDescriptors.store(false, ordering: .relaxed)
            return
        }
        try linkThroughProc(as: path, in: directory)
        #else
        throw .internalError("unnamed files exist only on Linux")
        #endif
    }

    #if os(Linux)
    /// ``link(as:)`` through the file's `/proc/self/fd` link, as where linking a descriptor needs a privilege.
    func linkThroughProc(as path: String) throws(DownloadError) {
        let directory = try FileSystem.directory(of: path)
        defer { directory.close() }
        try linkThroughProc(as: path, in: directory)
    }

    private func linkThroughProc(as path: String, in directory: FileSystem.ParentDirectory) throws(DownloadError) {
        let status = linkat(
            AT_FDCWD, "/proc/self/fd/\(descriptor)", directory.descriptor, directory.name, AT_SYMLINK_FOLLOW)
        guard status == 0 else { throw .fileSystem(errno: errno, path: path, operation: "link") }
    }

    /// `AT_EMPTY_PATH`, which the C module does not import.
    private static let emptyPath: Int32 = 0x1000
    /// Whether ``link(as:)`` may link the descriptor itself: until the system refuses once.
    private static let linksDescriptors = Atomic(true)
    /// `O_TMPFILE`, which the C module does not import: `__O_TMPFILE` (the same on every architecture Swift runs
    /// on) with `O_DIRECTORY`.
    private static let unnamedFileFlag: Int32 = 0o20000000 | O_DIRECTORY
    /// An unnamed file is named through its descriptor or, where that needs a privilege, its `/proc/self/fd` link.
    private static let canNameUnnamedFiles = access("/proc/self/fd", F_OK) == 0
    #endif

    /// The file's current length in bytes.
    func size() throws(DownloadError) -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .fileSystem(errno: errno, path: path, operation: "fstat") }
        return Int64(info.st_size)
    }

    /// Writes the readable bytes of `chunks`, one after another, from `offset`.
    func write(_ chunks: [ByteBuffer], at offset: Int64) throws(DownloadError) {
        var position = offset
        for chunk in chunks {
            try write(chunk, at: position)
            position += Int64(chunk.readableBytes)
        }
    }

    /// Writes all readable bytes of `buffer` at `offset`.
    func write(_ buffer: ByteBuffer, at offset: Int64) throws(DownloadError) {
        let result: Int32 = buffer.withUnsafeReadableBytes { raw in
            var written = 0
            while written < raw.count {
                let n = pwrite(
                    descriptor, raw.baseAddress! + written, raw.count - written, off_t(offset) + off_t(written))
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += n
            }
            return 0
        }
        if result != 0 { throw .fileSystem(errno: result, path: path, operation: "write") }
    }

    /// Reads up to `count` bytes at `offset` into `buffer` (replacing its contents); returns how many were read.
    @discardableResult
    func read(into buffer: inout [UInt8], count: Int, at offset: Int64) throws(DownloadError) -> Int {
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
        let result: Int = buffer.withUnsafeMutableBytes { raw in
            var done = 0
            while done < count {
                let n = pread(descriptor, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    return -Int(errno)
                }
                if n == 0 { break }
                done += n
            }
            return done
        }
        if result < 0 { throw .fileSystem(errno: Int32(-result), path: path, operation: "read") }
        return result
    }

    /// Reserves `length` bytes on disk (`posix_fallocate` where available, else `ftruncate`), so writes at any
    /// offset cannot run out of space half-way.
    func preallocate(_ length: Int64) throws(DownloadError) {
        #if os(Linux)
        let status = posix_fallocate(descriptor, 0, off_t(length))
        if status == 0 { return }
        if status != EOPNOTSUPP && status != EINVAL {
            throw .fileSystem(errno: status, path: path, operation: "allocate")
        }
        #endif
        try truncate(to: length)
    }

    /// Cuts the file to `length` bytes.
    func truncate(to length: Int64) throws(DownloadError) {
        guard PartFile.retryingInterrupts({ ftruncate(descriptor, off_t(length)) }) == 0 else {
            throw .fileSystem(errno: errno, path: path, operation: "truncate")
        }
    }

    /// Forces written data to stable storage (`fdatasync`; `F_FULLFSYNC` on Apple platforms).
    /// Flushes everything written to the file system this file is on, with a single device flush (Linux `syncfs`):
    /// what makes many files durable at once. Returns false where that is not available; use ``sync()`` on each.
    func syncFileSystem() throws(DownloadError) -> Bool {
        guard let syncfs = PartFile.syncfs else { return false }
        guard syncfs(descriptor) == 0 else { throw .fileSystem(errno: errno, path: path, operation: "sync") }
        return true
    }

    /// Linux's `syncfs(2)`, looked up at run time (the C module does not declare it).
    private static let syncfs: (@convention(c) (Int32) -> Int32)? = {
        #if os(Linux)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syncfs") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
        #else
        return nil
        #endif
    }()

    func sync() throws(DownloadError) {
        #if canImport(Darwin)
        let status = fcntl(descriptor, F_FULLFSYNC) == 0 ? 0 : fsync(descriptor)
        #else
        let status = fdatasync(descriptor)
        #endif
        guard status == 0 else { throw .fileSystem(errno: errno, path: path, operation: "sync") }
    }

    func close() {
        _ = systemClose(descriptor)
    }

    static func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}

/// `close(2)`, named apart from `PartFile.close()`.
func systemClose(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(fd)
    #else
    Darwin.close(fd)
    #endif
}
