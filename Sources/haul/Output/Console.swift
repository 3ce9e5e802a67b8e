import Foundation
import HaulKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Unbuffered writes to standard output and standard error, and what kind of terminal standard error is.
///
/// What a command was asked for (a list, JSON, a downloaded stream) goes to standard output; what it says while it
/// works (progress bars, status lines, messages) goes to standard error, as curl and wget do, so
/// `haul get URL -o - | tar x` and `2>/dev/null` work.
enum Console {
    /// Writes `text` to standard output at once, in one call.
    static func out(_ text: String) { write(1, text) }

    /// Writes `text` (progress, status lines) to standard error at once, in one call (a redrawn frame never tears).
    static func status(_ text: String) { write(2, text) }

    /// Writes one line to standard error, prefixed with `haul: `; control characters (which may come from a
    /// server) are removed first, so a message can never drive the terminal.
    static func error(_ message: String) { write(2, "haul: \(ControlCharacters.removed(from: message))\n") }

    /// True if standard error, where progress goes, is a terminal that understands cursor movement.
    static var isInteractive: Bool {
        isatty(2) == 1 && ProcessInfo.processInfo.environment["TERM"].map { $0 != "dumb" } ?? false
    }

    /// The terminal's width in columns: the kernel's idea, else `$COLUMNS`, else 80.
    static var width: Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 {
            return columns
        }
        return 80
    }

    private static func write(_ descriptor: Int32, _ text: String) {
        var text = text
        // A closed pipe: nothing useful left to do with the output.
        _ = text.withUTF8 { writeAll(descriptor, UnsafeRawBufferPointer($0)) }
    }

    /// Writes all of `bytes` to `descriptor`, again after an interrupted or partial write. Returns nil, or the
    /// `errno` of the write that failed (`EPIPE`: the reader went away).
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            #else
            let written = Darwin.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            #endif
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }
}
