import Foundation
import HaulKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Unbuffered writes to standard output and standard error, and what kind of terminal standard output is.
enum Console {
    /// Writes `text` to standard output at once, in one call (a redrawn frame never tears).
    static func out(_ text: String) { write(1, text) }

    /// Writes one line to standard error, prefixed with `haul: `; control characters (which may come from a
    /// server) are removed first, so a message can never drive the terminal.
    static func error(_ message: String) { write(2, "haul: \(ControlCharacters.removed(from: message))\n") }

    /// True if standard output is a terminal that understands cursor movement.
    static var isInteractive: Bool {
        isatty(1) == 1 && ProcessInfo.processInfo.environment["TERM"].map { $0 != "dumb" } ?? false
    }

    /// The terminal's width in columns: the kernel's idea, else `$COLUMNS`, else 80.
    static var width: Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 {
            return columns
        }
        return 80
    }

    private static func write(_ descriptor: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                #if canImport(Glibc)
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #else
                Darwin.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
            }
            if written < 0 {
                if errno == EINTR { continue }
                return  // A closed pipe: nothing useful left to do with the output.
            }
            offset += written
        }
    }
}
