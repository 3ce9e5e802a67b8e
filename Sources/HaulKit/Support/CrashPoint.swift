import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Named places where a crash test kills the process on purpose (`HAUL_CRASH_POINT=<name>`), to prove that a
/// crash exactly there loses nothing and trusts nothing unrecorded. Inert unless that variable names the point.
enum CrashPoint {
    private static let armed = ProcessInfo.processInfo.environment["HAUL_CRASH_POINT"]

    /// The part file of a multi-connection download was preallocated (zero-filled to its full size).
    static let afterPreallocation = "after-preallocation"
    /// A finishing group committed its held bodies' records; their part files are not written yet.
    static let afterHeldBodiesRecorded = "after-held-bodies-recorded"
    /// A finishing group renamed its files into place; their completion is not recorded yet.
    static let beforeCompletionRecorded = "before-completion-recorded"
    /// A download's last byte is written; its file is not hashed, synced or recorded finalizing yet.
    static let afterLastByte = "after-last-byte"
    /// A finishing group synced its part files; their records do not say finalizing yet.
    static let beforeFinalizingRecorded = "before-finalizing-recorded"

    /// Dies with SIGKILL here if the environment names `point`.
    static func reach(_ point: String) {
        guard armed == point else { return }
        kill(getpid(), SIGKILL)
    }
}
