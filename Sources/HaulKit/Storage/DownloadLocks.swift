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
