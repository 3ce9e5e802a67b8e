import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every end-to-end suite runs inside this one, one test at a time: they start real processes and servers, and
/// several at once on a small machine would turn timing assertions (bytes in flight at a SIGKILL, redraw rates)
/// into measurements of the machine's load.
@Suite(.serialized, .timeLimit(.minutes(10)))
enum EndToEnd {}

extension EndToEnd {
    /// A tmpfs of `size` (`8m`) mounted at `name` in `directory`, or nil where none can be (not root, or no tmpfs),
    /// having said why: the test then skips. Unmounted by the caller.
    static func smallFileSystem(
        _ size: String, named name: String, in directory: TemporaryDirectory
    ) async throws
        -> URL?
    {
        guard getuid() == 0 else {
            print("skipped: mounting a small file system needs root (CI runs it)")
            return nil
        }
        let mount = directory.file(name)
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        let mounted = try await ChildProcess.run(
            path: "/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mount.path])
        guard mounted.status == 0 else {
            print("skipped: tmpfs cannot be mounted here")
            return nil
        }
        return mount
    }
}
