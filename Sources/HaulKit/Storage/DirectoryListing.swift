#if os(Linux)
import Glibc
import Synchronization

/// The names in one directory, read once and then kept current by the kernel's change notices (inotify), so that a
/// name can be found free without looking it up on disk. In a directory of 10,000 files, the two or three lookups
/// that find a new download's name free were a tenth of the busy event loop's work.
///
/// A name it does not hold is as surely free as a lookup would say: the kernel queues the notice of a new entry
/// before the call that made it returns, and ``refresh()`` reads every queued notice first. A name it holds may
/// differ from the one on disk by Unicode normalization, so the caller looks that one up. It is made only where the
/// notices see every change and names compare byte for byte: ext4, btrfs or tmpfs, not a case-folding directory.
///
/// It may be used from several threads: the reservations' and the finishing group's (see ``DirectoryListings``).
final class DirectoryListing: Sendable {
    /// The directory, as the reservations name it.
    let path: String
    private let notices: Int32
    /// The watched directory's device and inode: ``refresh()`` drops the listing once the path names another.
    private let identity: Identity
    private let state: Mutex<State>

    /// The names, and where notices are read into (kept for the listing's life).
    private struct State: ~Copyable {
        var names: Set<String>
        let buffer: UnsafeMutableRawBufferPointer
    }

    /// How many entries a listing may hold; a larger directory is looked up name by name.
    static let entryLimit = 100_000

    /// Lists `path`; nil where a listing cannot be trusted or made (another file system, a case-folding directory, no
    /// notices left, more than ``entryLimit`` entries).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR,
            Self.namesCompareExactly(path, identity: Identity(info))
        else { return nil }
        let notices = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard notices >= 0 else { return nil }
        // Watch before reading, so nothing made while reading is missed.
        guard inotify_add_watch(notices, path, Self.watched) >= 0, let names = Self.names(in: path) else {
            _ = systemClose(notices)
            return nil
        }
        self.path = path
        self.notices = notices
        self.identity = Identity(info)
        self.state = Mutex(State(names: names, buffer: .allocate(byteCount: 16 * 1024, alignment: 8)))
        guard refresh() else { return nil }
    }

    deinit {
        _ = systemClose(notices)
        state.withLock { $0.buffer.deallocate() }
    }

    /// Applies the notices queued since the last call. False if the listing can no longer be trusted: the
    /// directory was moved, removed or replaced at its path, or notices were lost; drop it then.
    func refresh() -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, Identity(info) == identity else { return false }
        return state.withLock { state in
            while true {
                let count = PartFile.retryingInterrupts { read(notices, state.buffer.baseAddress, state.buffer.count) }
                if count < 0 { return errno == EAGAIN }
                guard count > 0, Self.apply(state.buffer, count: count, to: &state.names) else { return false }
            }
        }
    }

    /// Whether an entry named `name` was in the directory at the last ``refresh()``, or may have been (see the type).
    func contains(_ name: String) -> Bool { state.withLock { $0.names.contains(name) } }

    /// Whether nothing named `name` was in the directory at the last ``refresh()``: false for a name it holds, and
    /// for one that is not a plain name of an entry (empty, `.`, `..`, or with a slash), which must be looked up.
    func showsAbsent(_ name: String) -> Bool {
        let plain = !name.isEmpty && !name.utf8.contains(UInt8(ascii: "/")) && name != "." && name != ".."
        return plain && !contains(name)
    }

    /// Applies the notices in the first `count` bytes of `buffer` to `names`; false if one says the listing is lost.
    private static func apply(_ buffer: UnsafeMutableRawBufferPointer, count: Int, to names: inout Set<String>) -> Bool
    {
        let header = MemoryLayout<inotify_event>.size
        var offset = 0
        while offset + header <= count {
            let event = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let nameLength = min(Int(event.len), count - offset - header)
            if event.mask & UInt32(IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) != 0 {
                return false
            }
            if nameLength > 0 {
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[(offset + header)..<(offset + header + nameLength)])
                let name = Self.name(bytes)
                if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { names.insert(name) }
                if event.mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { names.remove(name) }
            }
            offset += header + nameLength
        }
        return true
    }

    /// A name the kernel gives (a directory entry's or a notice's): its bytes up to the first NUL, as UTF-8 with any
    /// invalid bytes replaced. Both ways in decode alike, so a notice removes the very name the listing read.
    private static func name(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    private static let watched = UInt32(
        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// The names in `path`, or nil if it cannot be read or has more than ``entryLimit`` entries. A name that is not
    /// UTF-8 is kept with its bytes replaced: no name Haul picks equals its bytes, and the one it reads as is looked up.
    private static func names(in path: String) -> Set<String>? {
        guard let stream = opendir(path) else { return nil }
        defer { closedir(stream) }
        var names: Set<String> = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name, Self.name)
            if name != "." && name != ".." { names.insert(name) }
            if names.count > entryLimit { return nil }
        }
        return names
    }

    /// File systems whose notices report every change to a directory and whose names are bytes.
    private static let trustedFileSystems: Set<String> = ["ext4", "btrfs", "tmpfs"]
    /// `FS_IOC_GETFLAGS` (`_IOR('f', 1, long)`) and its case-folding flag, which the C module does not import.
    private static let getFlags: UInt = 0x8008_6601
    private static let caseFolding: Int32 = 0x4000_0000

    /// Whether `path`, the directory `identity`, is on a trusted file system and does not fold case.
    ///
    /// Follows a symbolic link, as `stat`, `opendir` and the inotify watch do: a directory reached through one is
    /// listed like any other, and ``refresh()`` drops the listing once the path names another directory.
    private static func namesCompareExactly(_ path: String, identity: Identity) -> Bool {
        guard let type = fileSystemType(of: identity.device), trustedFileSystems.contains(type) else { return false }
        let descriptor = PartFile.retryingInterrupts { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard descriptor >= 0 else { return false }
        defer { _ = systemClose(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, Identity(info) == identity else { return false }
        var flags: Int32 = 0
        guard ioctl(descriptor, getFlags, &flags) == 0 else { return false }
        return flags & caseFolding == 0
    }

    /// Which directory a `stat` describes.
    private struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// The type of the file system mounted as `device`, from `/proc/self/mountinfo` (its third field is the
    /// device's `major:minor`; the type follows the ` - ` separator).
    private static func fileSystemType(of device: UInt64) -> String? {
        guard let stream = fopen("/proc/self/mountinfo", "re") else { return nil }
        defer { fclose(stream) }
        // glibc's encoding of a device number (`gnu_dev_major`, `gnu_dev_minor`).
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        let wanted = "\(major):\(minor)"
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, stream) > 0, let line {
            let fields = String(cString: line).split(separator: " ")
            guard fields.count > 2, fields[2] == wanted, let dash = fields.firstIndex(of: "-"),
                dash + 1 < fields.count
            else { continue }
            return String(fields[dash + 1])
        }
        return nil
    }
}
#endif
