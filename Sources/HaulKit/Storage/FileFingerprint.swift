import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a completed download's file was when Haul put it in place: size, modification time, identity (device and
/// inode) and the SHA-256 of its bytes. Compared with the file on disk before Haul says a download is complete, so a
/// file truncated, edited, replaced or deleted since is never reported as the download.
struct FileFingerprint: Sendable, Equatable {
    var size: Int64
    /// The modification time, in nanoseconds since 1970.
    var modified: Int64
    /// `device:inode`. Once a completed download is queued again, the file at its name then (``nothingThere`` if
    /// none): the one file its run may replace whatever its options (`DownloadJob.ownFileAtStart()`).
    var identity: String
    /// Lowercase hexadecimal; nil where it was not computed (a download completed by an earlier version of Haul).
    var sha256: String?
    /// What the file's bytes were verified against when it completed; nil for a download completed before Haul kept
    /// this.
    var verification: DownloadVerification?

    /// The identity a reopened download's fingerprint takes when nothing was at its name then (no `device:inode`
    /// reads so): no file that appears there later is taken for the one its run may replace.
    static let nothingThere = "-"

    /// How the file on disk compares with its fingerprint.
    enum Comparison: Sendable, Equatable {
        /// Same size, modification time and identity.
        case unchanged
        /// Nothing is there any more.
        case missing
        /// A regular file, shorter than it was: maybe a prefix of it (a truncated file), resumed and checked whole.
        case shorter(size: Int64)
        /// A regular file of another size, time or identity: its bytes may differ.
        case changed(size: Int64)
        /// A directory, a symbolic link or something else than a file is there now.
        case replaced(what: String)
    }

    /// The fingerprint (without its digest) of the file open at `descriptor`.
    static func of(descriptor: Int32) -> FileFingerprint? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return FileFingerprint(info)
    }

    /// The fingerprint (without its digest) of the regular file at `path` (never following a symbolic link), or nil.
    static func of(path: String) -> FileFingerprint? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileFingerprint(info)
    }

    private init(_ info: stat) {
        size = Int64(info.st_size)
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        modified = Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        identity = "\(info.st_dev):\(info.st_ino)"
        sha256 = nil
    }

    init(
        size: Int64, modified: Int64, identity: String, sha256: String?, verification: DownloadVerification? = nil
    ) {
        self.size = size
        self.modified = modified
        self.identity = identity
        self.sha256 = sha256
        self.verification = verification
    }

    /// Whether the file was kept as it was found (`--no-clobber`, or `-N` with no newer copy on the server) without
    /// Haul ever fetching or reading it: every file Haul completes has its SHA-256.
    var keptNotFetched: Bool { sha256 == nil }

    /// Compares the file now at `path` with this fingerprint (size, modification time, identity; never its bytes).
    func compare(withFileAt path: String) -> Comparison {
        let entry = FileSystem.entry(at: path)
        guard case .regularFile(let size) = entry else { return Self.notAFile(entry) }
        guard let now = Self.of(path: path) else { return .missing }
        if now.size == self.size, now.modified == modified, now.identity == identity { return .unchanged }
        return size < self.size ? .shorter(size: size) : .changed(size: size)
    }

    /// What is at a path where a regular file is expected, when it is not one: nothing, or something else.
    static func notAFile(_ entry: FileSystem.Entry) -> Comparison {
        switch entry {
        case .none, .regularFile: .missing
        case .directory: .replaced(what: "a directory")
        case .symbolicLink: .replaced(what: "a symbolic link")
        case .other: .replaced(what: "something other than a file")
        }
    }

    /// Says how `comparison` differs from this fingerprint, for a message ("is 1048576 bytes now, 10485760 when it was
    /// downloaded").
    func describe(_ comparison: Comparison) -> String {
        switch comparison {
        case .unchanged: return "is unchanged"
        case .missing: return "is gone"
        case .replaced(let what): return "is \(what) now"
        case .shorter(let size), .changed(let size):
            guard size != self.size else { return "was modified (same size, another time or file)" }
            return "is \(size) bytes now, \(self.size) when it was downloaded"
        }
    }
}
