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

    #if os(Linux)
    // <fcntl.h> defines these only under _GNU_SOURCE, which Swift's Glibc module does not expose.
    private static let setLock: Int32 = 37  // F_OFD_SETLK
    #else
    private static let setLock: Int32 = F_SETLK
    #endif

    /// Opens (creating if needed) the lock file at `path`.
    init(path: String) throws(DownloadError) {
        self.path = path
        let fd = PartFile.retryingInterrupts { open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644) }
        guard fd >= 0 else { throw .fileSystem(errno: errno, path: path, operation: "open") }
        descriptor = fd
    }

    deinit { _ = systemClose(descriptor) }

    /// Takes the lock of `id` without waiting; false if another owner holds it.
    func tryLock(_ id: DownloadID) -> Bool {
        change(id, to: Int16(F_WRLCK)) == 0
    }

    /// Releases the lock of `id`.
    func unlock(_ id: DownloadID) {
        _ = change(id, to: Int16(F_UNLCK))
    }

    /// True if another owner holds the lock of `id` (it is running that download). Call only for downloads this
    /// owner does not hold.
    func isHeldElsewhere(_ id: DownloadID) -> Bool {
        guard tryLock(id) else { return true }
        unlock(id)
        return false
    }

    private func change(_ id: DownloadID, to type: Int16) -> Int32 {
        var lock = flock()
        lock.l_type = type
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(id.rawValue)
        lock.l_len = 1
        return PartFile.retryingInterrupts { fcntl(descriptor, Self.setLock, &lock) }
    }
}
