import ArgumentParser
import Foundation
import HaulKit
import Synchronization

/// A list of downloads (`-i FILE`), in aria2's input-file format:
///
/// ```
/// # a comment
/// https://example.com/a.iso<TAB>https://mirror.example/a.iso out=a.iso
///   checksum=sha-256=9f86d0…
///   header=Authorization: Bearer TOKEN
///   connections=8
/// https://example.com/b.zip
///   dir=downloads/zips
/// ```
///
/// A URL line names one file: its URL, then mirrors of the same file (TAB- or space-separated) and `KEY=VALUE` words.
/// Indented lines under it set more options of that file, one `KEY=VALUE` a line (a value may hold spaces).
struct InputFile {
    /// One download of the list.
    struct Entry {
        var url: String
        var mirrors: [String] = []
        var line: Int?
        /// File name (relative to ``dir``, else to `-d`, else to the current directory).
        var out: String?
        var dir: String?
        var checksum: Checksum?
        var headers: [HTTPHeaderField] = []
        var connections: Int?
        /// `max-requests-per-host=`, `wait=`, `random-wait=`: this download's own request pacing.
        var pacing: RequestPacing?
    }

    /// The keys a line may set, with aria2's names for the same things.
    static let keys =
        "out, dir, checksum, header, connections (or split), referer, user-agent, max-requests-per-host, wait, "
        + "random-wait"

    /// Input files already read, by path: `validate()` and `run()` both read the list, and standard input can be
    /// read once.
    private static let read = Mutex<[String: Data]>([:])

    /// The entries of the file at `path` (`-` for standard input), read one at a time (``Reader``): a list of
    /// 100,000 URLs is validated, then added in batches, never held whole.
    static func reader(for path: String) throws -> Reader {
        let data = try read.withLock { read in
            if let known = read[path] { return known }
            let contents = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : readWhole(path)
            guard let contents else {
                throw ValidationError("cannot read the input file \(path): check that it exists and is UTF-8 text")
            }
            read[path] = contents
            return contents
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ValidationError("cannot read the input file \(path): check that it exists and is UTF-8 text")
        }
        return Reader(text: text, name: path)
    }

    /// The whole of the file at `path`, read to its end: a pipe or FIFO too (`-i <(grep … urls.txt)`), which
    /// `FileManager.contents(atPath:)` refuses. Nil if it cannot be opened or read (missing, a directory).
    private static func readWhole(_ path: String) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            return nil
        }
    }

    /// The entries of a list's text, one at a time: an entry is complete when the next URL line, or the end, comes.
    struct Reader {
        private let text: String
        /// The list's name, for messages.
        private let name: String
        private var position: String.UTF8View.Index
        private var number = 0
        /// The entry read last, until the lines of options under it end.
        private var pending: Entry?

        init(text: String, name: String) {
            self.text = text
            self.name = name
            position = text.utf8.startIndex
        }

        /// The next entry, or nil at the end; throws on a line that is not a URL line or a `KEY=VALUE` line.
        mutating func next() throws -> Entry? {
            // Lines are found as bytes: splitting 100,000 lines by characters was a fifth of `haul add`.
            let bytes = text.utf8
            while position < bytes.endIndex {
                let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
                let line = Substring(bytes[position..<end])
                position = end < bytes.endIndex ? bytes.index(after: end) : end
                number += 1
                let trimmed = line.trimmingWhitespace()
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                let indented = line.first == " " || line.first == "\t"
                if indented, InputFile.isOption(trimmed) {
                    guard pending != nil else {
                        throw ValidationError("\(name) line \(number): an option line must follow a URL line")
                    }
                    try InputFile.set(trimmed, on: &pending!, at: "\(name) line \(number)")
                    continue
                }
                var entry: Entry
                if trimmed.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
                    let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                    entry = Entry(url: words[0], line: number)
                    for word in words.dropFirst() {
                        if InputFile.isOption(word) {
                            try InputFile.set(word, on: &entry, at: "\(name) line \(number)")
                        } else {
                            entry.mirrors.append(word)
                        }
                    }
                } else {
                    // A line with only its URL (most lines) makes no array of words.
                    entry = Entry(url: trimmed, line: number)
                }
                let finished = pending
                pending = entry
                if let finished { return finished }
            }
            let last = pending
            pending = nil
            return last
        }
    }

    /// Whether `text` is `KEY=VALUE` (a key of letters and dashes), not a URL.
    fileprivate static func isOption(_ text: String) -> Bool {
        guard let equals = text.firstIndex(of: "="), equals > text.startIndex else { return false }
        return text[..<equals].allSatisfy { $0.isLetter || $0 == "-" }
    }

    /// Applies one `KEY=VALUE`.
    fileprivate static func set(_ option: String, on entry: inout Entry, at place: String) throws {
        guard let equals = option.firstIndex(of: "=") else {
            throw ValidationError("\(place): '\(option)' is not KEY=VALUE (keys: \(keys))")
        }
        let key = option[..<equals].lowercased()
        let value = String(option[option.index(after: equals)...]).trimmingWhitespace()
        guard !value.isEmpty else { throw ValidationError("\(place): \(key)= needs a value") }
        do {
            switch key {
            case "out": entry.out = value
            case "dir": entry.dir = value
            case "checksum": entry.checksum = try Checksum(parsing: value)
            case "header": entry.headers.append(try HTTPHeaderField(parsing: value))
            case "referer": entry.headers.append(try HTTPHeaderField(parsing: "Referer: \(value)"))
            case "user-agent": entry.headers.append(try HTTPHeaderField(parsing: "User-Agent: \(value)"))
            case "connections", "split":
                guard let count = Int(value), (1...32).contains(count) else {
                    throw ValidationError("\(place): \(key)= must be 1 to 32, got '\(value)'")
                }
                entry.connections = count
            case "max-requests-per-host":
                entry.pacing = entry.pacing ?? RequestPacing()
                entry.pacing?.maxRequestsPerHost = try RequestRate(parsing: value)
            case "wait":
                entry.pacing = entry.pacing ?? RequestPacing()
                entry.pacing?.wait = try HostOptions.waitDuration(value, name: "wait=")
            case "random-wait":
                guard let flag = ["true": true, "yes": true, "false": false, "no": false][value.lowercased()] else {
                    throw ValidationError("\(place): random-wait= must be true or false, got '\(value)'")
                }
                entry.pacing = entry.pacing ?? RequestPacing()
                entry.pacing?.randomWait = flag
            default:
                throw ValidationError("\(place): unknown option '\(key)' (keys: \(keys))")
            }
        } catch let error as DownloadError {
            throw ValidationError("\(place): \(error.summary)")
        }
    }
}
