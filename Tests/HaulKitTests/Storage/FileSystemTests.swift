import Foundation
import Testing

@testable import HaulKit

@Suite("File system")
struct FileSystemTests {
    @Test(
        "the parent of a path is Foundation's, plain or not",
        arguments: [
            "/tmp/downloads/file.bin", "/tmp/downloads/file.bin.part", "/file", "/", "file", "dir/file", "",
            "/tmp/downloads/", "/tmp//downloads/file", "//file", "/tmp/ünïcødé dir/naïve (1).tar.gz",
            "/tmp/./a/../b/file", "/tmp/downloads//", "a/b/c/", "//",
        ])
    func parent(_ path: String) {
        #expect(FileSystem.parent(of: path) == (path as NSString).deletingLastPathComponent)
    }
}
