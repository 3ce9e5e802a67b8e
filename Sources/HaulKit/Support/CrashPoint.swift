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

    /// Dies with SIGKILL here if the environment names `point`.
    static func reach(_ point: String) {
        guard armed == point else { return }
        kill(getpid(), SIGKILL)
    }
}
