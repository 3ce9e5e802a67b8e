import Foundation

/// Chooses and sanitises the names of downloaded files.
///
/// A name from the network never leaves the download directory: any path is stripped (`/`, `\`, `..`), control
/// characters and NUL are removed, leading dots are dropped (no hidden files), and the name is capped so that it
/// and its longest sibling (`.part.segments`) fit in 255 bytes, keeping the extension.
enum FileNamer {
    /// Longest name in UTF-8 bytes, leaving room for the longest sibling's suffix within the usual 255-byte limit.
    static let maximumLength = 255 - longestSiblingSuffix.utf8.count
    static let fallbackName = "index.html"

    /// The name for a download: `Content-Disposition` first, else the URL's last path segment, else `index.html`.
    static func name(contentDisposition: String?, url: URL) -> String {
        if let header = contentDisposition, let raw = ContentDisposition.fileName(from: header),
            let name = sanitise(raw)
        {
            return name
        }
        if let segment = lastPathSegment(of: url), let name = sanitise(segment) {
            return name
        }
        return fallbackName
    }

    /// The last non-empty path segment of `url`, percent-decoded.
    static func lastPathSegment(of url: URL) -> String? {
        let path = url.path(percentEncoded: true)
        // The last run of bytes between slashes, found from the end (no array of all the segments).
        let bytes = path.utf8
        guard let last = bytes.lastIndex(where: { $0 != UInt8(ascii: "/") }) else { return nil }
        let start = bytes[..<last].lastIndex(of: UInt8(ascii: "/")).map(bytes.index(after:)) ?? bytes.startIndex
        let segment = path[start...last]
        // Nothing to decode in most names.
        guard segment.utf8.contains(UInt8(ascii: "%")) else { return String(segment) }
        guard let bytes = ContentDisposition.percentDecodedBytes(segment) else { return String(segment) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A safe file name from untrusted `raw` text, or nil if nothing usable is left.
    static func sanitise(_ raw: String) -> String? {
        isPlain(raw) ? raw : cleaned(raw)
    }

    /// What is left of `raw` once cleaned (what ``sanitise(_:)`` returns for a name that is not plain).
    static func cleaned(_ raw: String) -> String? {
        // Keep only the last path component, whichever separator the sender used.
        let lastComponent = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var name = String(
            String.UnicodeScalarView(
                lastComponent.unicodeScalars.filter { scalar in
                    !(scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value))
                }))
        name = name.trimmingWhitespace()
        while name.hasPrefix(".") { name.removeFirst() }
        name = name.trimmingWhitespace()
        guard !name.isEmpty else { return nil }
        return capped(name)
    }

    /// Whether `name` is already safe as it is (``cleaned(_:)`` would return it unchanged): printable ASCII
    /// without a separator or space, not starting with a dot, short enough. Most names are; checking costs less
    /// than cleaning.
    static func isPlain(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, first != UInt8(ascii: "."), bytes.count <= maximumLength else { return false }
        return bytes.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "\\")
        }
    }

    /// `name` shortened to ``maximumLength`` UTF-8 bytes, cutting the stem and keeping the extension.
    static func capped(_ name: String) -> String {
        guard name.utf8.count > maximumLength else { return name }
        let (stem, suffix) = split(name)
        let keptSuffix = suffix.utf8.count <= 32 ? suffix : ""
        return leading(stem, bytes: maximumLength - keptSuffix.utf8.count) + keptSuffix
    }

    /// `name (n).ext` for the n-th alternative when a name is taken (`archive (1).tar.gz`), within
    /// ``maximumLength``: a long stem is cut before ` (n)` is added, so that every `n` gives another name (cutting
    /// the whole name took ` (n)` off again: a long name that was taken was tried forever).
    static func alternative(_ name: String, number: Int) -> String {
        let (stem, suffix) = split(name)
        let marker = " (\(number))"
        let whole = stem + marker + suffix
        guard whole.utf8.count > maximumLength else { return whole }
        let keptSuffix = suffix.utf8.count <= 32 ? suffix : ""
        return leading(stem, bytes: maximumLength - marker.utf8.count - keptSuffix.utf8.count) + marker + keptSuffix
    }

    /// The whole characters of `text` that fit in `bytes` UTF-8 bytes, from its start.
    private static func leading(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var budget = bytes
        var kept = ""
        for character in text {
            let size = character.utf8.count
            if size > budget { break }
            kept.append(character)
            budget -= size
        }
        return kept
    }

    /// Whether a name says the file is compressed, so a `Content-Encoding: gzip` body is the file itself.
    static func saysCompressed(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return [".gz", ".tgz", ".gzip", ".z", ".zz", ".svgz"].contains { lowered.hasSuffix($0) }
    }

    /// Splits `name` into stem and extension, keeping compound `.tar.*` extensions together.
    static func split(_ name: String) -> (stem: String, suffix: String) {
        let lowered = name.lowercased()
        for compound in [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst"] where lowered.hasSuffix(compound) {
            let index = name.index(name.endIndex, offsetBy: -compound.count)
            if index > name.startIndex { return (String(name[..<index]), String(name[index...])) }
        }
        guard let dot = name.lastIndex(of: "."), dot > name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }
}

/// The suffix of the file a download writes into until it is complete.
let partFileSuffix = ".part"
/// The suffix of the multi-connection journal kept beside a part file (`SegmentJournal` names its file with it).
let journalFileSuffix = ".segments"
/// The longest suffix of a file Haul keeps beside a destination: the multi-connection journal.
let longestSiblingSuffix = partFileSuffix + journalFileSuffix
