import Foundation

#if canImport(Darwin)
import Darwin
#endif

/// Identifies the running operating-system boot.
///
/// Bytes that `write` accepted survive the death of the process (they sit in the page cache) but not an OS
/// crash. A checkpoint records the boot it was taken in: when the boot is still the same, every byte in the
/// part file is trusted; after a reboot only the bytes that were `fdatasync`ed before the checkpoint are.
enum BootIdentity {
    /// The current boot's identifier, or nil where the platform cannot tell (then only synced bytes are trusted).
    static let current: String? = read()

    private static func read() -> String? {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else {
            return nil
        }
        let trimmed = text.trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
        #elseif canImport(Darwin)
        var boottime = timeval()
        var size = MemoryLayout<timeval>.size
        guard sysctlbyname("kern.boottime", &boottime, &size, nil, 0) == 0 else { return nil }
        return "\(boottime.tv_sec).\(boottime.tv_usec)"
        #else
        return nil
        #endif
    }
}
