import Foundation
import Synchronization

/// Directories below which Haul follows no symbolic link: `haul serve` confines its download directory, whose
/// sub-directories other local users or processes may be able to change while a download runs.
///
/// For a path beneath a confined directory, the part file and the segment journal are opened, directories created,
/// the finished file renamed (or linked) into place and files removed relative to a descriptor of the confined
/// directory, refusing a symbolic link anywhere below it (`ConfinedPath`): a link planted after `dir` was checked
/// cannot make Haul write, replace or delete anything outside. The confined directory itself may be reached through
/// links (its owner chose it). Paths beneath no confined directory are handled as before.
public enum ConfinedDirectories {
    private static let roots = Mutex<[String]>([])
    /// Whether any directory is confined: the common case (the command line) costs one atomic load per operation.
    private static let isActive = Atomic(false)

    /// Confines `directory`: named as given and with its links resolved (paths may use either). The file-system root
    /// is never confined (nothing would be reachable through the links of the system's own layout). Stays in force
    /// for the life of the process.
    public static func confine(_ directory: URL) {
        let given = directory.standardizedFileURL.path
        let resolved = directory.standardizedFileURL.resolvingSymlinksInPath().path
        roots.withLock { roots in
            for path in [given, resolved] where path != "/" && !path.isEmpty && !roots.contains(path) {
                roots.append(path)
            }
        }
        isActive.store(true, ordering: .releasing)
    }

    /// The outermost confined directory that `path` is strictly beneath, and the rest of the path below it; nil when
    /// it is beneath none.
    static func split(_ path: String) -> (root: String, below: Substring)? {
        guard isActive.load(ordering: .acquiring) else { return nil }
        let bytes = path.utf8
        let root = roots.withLock { roots in
            roots.filter { root in
                bytes.count > root.utf8.count + 1 && bytes.starts(with: root.utf8)
                    && bytes.dropFirst(root.utf8.count).first == UInt8(ascii: "/")
            }
            .min { $0.utf8.count < $1.utf8.count }
        }
        guard let root else { return nil }
        return (root, Substring(bytes.dropFirst(root.utf8.count + 1)))
    }
}
