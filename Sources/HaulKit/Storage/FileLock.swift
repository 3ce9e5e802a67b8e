#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
