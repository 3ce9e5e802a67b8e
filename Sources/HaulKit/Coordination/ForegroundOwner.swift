import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The foreground command (a process) that owns its downloads, as recorded with them
/// (``DownloadManager/Configuration/ownsItsDownloads``): its label, host, OS boot, process id and the process's start
/// time, so another process can tell whether it is still running, even after the id was reused.
struct ForegroundOwner: Sendable, Equatable {
    /// What the command is, for people (`haul get`).
    var label: String
    var host: String
    var boot: String
    var pid: Int32
    /// The process's start time as the system counts it (clock ticks since boot on Linux); 0 where unknown.
    var started: UInt64

    /// This process.
    static func current(label: String) -> ForegroundOwner {
        let pid = getpid()
        return ForegroundOwner(
            label: label, host: ProcessInfo.processInfo.hostName, boot: BootIdentity.current ?? "",
            pid: pid, started: startTime(of: pid) ?? 0)
    }

    /// The text stored in a record: `label|host|boot|pid|started`.
    var text: String { "\(label)|\(host)|\(boot)|\(pid)|\(started)" }

    init(label: String, host: String, boot: String, pid: Int32, started: UInt64) {
        self.label = label
        self.host = host
        self.boot = boot
        self.pid = pid
        self.started = started
    }

    /// Reads ``text``; nil for anything else.
    init?(text: String) {
        let fields = text.split(separator: "|", omittingEmptySubsequences: false)
        guard fields.count == 5, let pid = Int32(fields[3]), let started = UInt64(fields[4]) else { return nil }
        self.init(
            label: String(fields[0]), host: String(fields[1]), boot: String(fields[2]), pid: pid, started: started)
    }

    /// How it is shown: `haul get (pid 4711)`, with the host when it is another.
    var description: String {
        host == ProcessInfo.processInfo.hostName ? "\(label) (pid \(pid))" : "\(label) (pid \(pid) on \(host))"
    }

    /// Whether the process has ended: on this host, another boot, or no process with its id and start time. A
    /// process on another host cannot be checked: it counts as running.
    var hasEnded: Bool {
        guard host == ProcessInfo.processInfo.hostName else { return false }
        if !boot.isEmpty, let current = BootIdentity.current, boot != current { return true }
        guard kill(pid, 0) == 0 || errno == EPERM else { return true }
        guard started != 0, let now = Self.startTime(of: pid) else { return false }
        return now != started
    }

    /// The start time of process `pid` (field 22 of `/proc/PID/stat`); nil where it cannot be read.
    private static func startTime(of pid: Int32) -> UInt64? {
        #if os(Linux)
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After the command name in parentheses: state is field 3, start time field 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
        #else
        return nil
        #endif
    }
}
