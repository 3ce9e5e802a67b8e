#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One lock per download, so that a download runs in at most one process (or manager) at a time.
///
/// The locks are byte-range locks on one file next to the state database: download `id` locks byte `id`. The
/// kernel releases them when their owner dies, so a lock held means a live owner. On Linux they are
/// open-file-description locks, which also keep apart two managers in one process; elsewhere they are POSIX
/// record locks, which keep apart processes.
final class DownloadLocks: Sendable {
    let path: String
    private let descriptor: Int32

    /// Opens (creating if needed) the lock file at `path`.
    init(path: String) throws(DownloadError) {
        self.path = path
        let fd = PartFile.retryingInterrupts { open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        guard fd >= 0 else { throw .fileSystem(errno: errno, path: path, operation: "open") }
        descriptor = fd
    }

    deinit { _ = systemClose(descriptor) }

    /// Takes the lock of `id` without waiting; false if another owner holds it.
    func tryLock(_ id: DownloadID) -> Bool {
        FileLock.tryLock(descriptor, start: id.rawValue, length: 1)
    }

    /// Releases the lock of `id`.
    func unlock(_ id: DownloadID) {
        FileLock.unlock(descriptor, start: id.rawValue, length: 1)
    }

    /// True if another owner holds the lock of `id` (it is running that download). Call only for downloads this
    /// owner does not hold.
    func isHeldElsewhere(_ id: DownloadID) -> Bool {
        guard tryLock(id) else { return true }
        unlock(id)
        return false
    }
}

/// Byte-range write locks that the kernel releases when their owner dies: open-file-description locks on Linux
/// (which also keep apart two descriptors in one process), POSIX record locks elsewhere.
enum FileLock {
    #if os(Linux)
    // <fcntl.h> defines this only under _GNU_SOURCE, which Swift's Glibc module does not expose.
    private static let setLock: Int32 = 37  // F_OFD_SETLK
    #else
    private static let setLock: Int32 = F_SETLK
    #endif

    /// Takes the write lock of `length` bytes from `start` (0: to the end of the file) without waiting.
    static func tryLock(_ descriptor: Int32, start: Int64, length: Int64) -> Bool {
        change(descriptor, to: Int16(F_WRLCK), start: start, length: length) == 0
    }

    static func unlock(_ descriptor: Int32, start: Int64, length: Int64) {
        _ = change(descriptor, to: Int16(F_UNLCK), start: start, length: length)
    }

    private static func change(_ descriptor: Int32, to type: Int16, start: Int64, length: Int64) -> Int32 {
        var lock = flock()
        lock.l_type = type
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(start)
        lock.l_len = off_t(length)
        return PartFile.retryingInterrupts { fcntl(descriptor, setLock, &lock) }
    }
}
