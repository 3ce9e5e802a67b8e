import Synchronization

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
///
/// It knows which locks it holds: taking one again succeeds, and asking whether one of them is held elsewhere
/// answers no without probing it (a probe takes and releases the lock, which would release the owner's own).
final class DownloadLocks: Sendable {
    let path: String
    private let descriptor: Int32
    /// The locks taken through this object and not released; every change of a lock happens under it.
    private let held = Mutex<Set<DownloadID>>([])

    /// Opens (creating if needed) the lock file at `path`.
    init(path: String) throws(DownloadError) {
        self.path = path
        let fd = PartFile.retryingInterrupts { open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        guard fd >= 0 else { throw .fileSystem(errno: errno, path: path, operation: "open") }
        descriptor = fd
    }

    deinit { _ = systemClose(descriptor) }

    /// Takes the lock of `id` without waiting (again, if this owner holds it); false if another owner holds it.
    func tryLock(_ id: DownloadID) -> Bool {
        held.withLock { held in
            guard held.contains(id) || FileLock.tryLock(descriptor, start: id.rawValue, length: 1) else { return false }
            held.insert(id)
            return true
        }
    }

    /// Takes the locks of `ids` without waiting, as ``tryLock(_:)`` does each; whether each was taken. Consecutive ids
    /// are taken as one range when no other owner holds any of them (one system call for a batch of claims), else
    /// one by one.
    func tryLock(_ ids: [DownloadID]) -> [Bool] {
        held.withLock { held in
            var taken = held.intersection(ids)
            // Sorted and distinct, so each id but the last is below Int64.max: `+ 1` cannot overflow.
            let wanted = Set(ids).subtracting(held).map(\.rawValue).sorted()
            var start = 0
            while start < wanted.count {
                var end = start + 1
                while end < wanted.count, wanted[end] == wanted[end - 1] + 1 { end += 1 }
                let run = wanted[start..<end]
                if run.count > 1, FileLock.tryLock(descriptor, start: run.first!, length: Int64(run.count)) {
                    taken.formUnion(run.map(DownloadID.init(rawValue:)))
                } else {
                    for id in run where FileLock.tryLock(descriptor, start: id, length: 1) {
                        taken.insert(DownloadID(rawValue: id))
                    }
                }
                start = end
            }
            held.formUnion(taken)
            return ids.map(taken.contains)
        }
    }

    /// Releases the lock of `id`, if this owner holds it.
    func unlock(_ id: DownloadID) {
        held.withLock { held in
            if held.remove(id) != nil { FileLock.unlock(descriptor, start: id.rawValue, length: 1) }
        }
    }

    /// Releases every lock this owner holds.
    func unlockAll() {
        held.withLock { held in
            for id in held { FileLock.unlock(descriptor, start: id.rawValue, length: 1) }
            held.removeAll()
        }
    }

    /// True if another owner holds the lock of `id` (it is running that download); false for one this owner holds.
    func isHeldElsewhere(_ id: DownloadID) -> Bool {
        held.withLock { held in
            guard !held.contains(id) else { return false }
            guard FileLock.tryLock(descriptor, start: id.rawValue, length: 1) else { return true }
            FileLock.unlock(descriptor, start: id.rawValue, length: 1)
            return false
        }
    }
}
