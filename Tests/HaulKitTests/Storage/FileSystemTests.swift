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

    @Test(
        "a name in a directory is Foundation's, plain or not",
        arguments: [
            ("/tmp/downloads", "file.bin"), ("/tmp/downloads", "file (1).bin.part"), ("/", "file"), ("", "file"),
            ("dir", "file"), ("/tmp/downloads/", "file"), ("/tmp//downloads", "file"), ("//", "file"),
            ("/tmp/ünïcødé dir", "naïve (1).tar.gz"), ("/tmp/./a/../b", "file"), ("/tmp/downloads//", "file"),
            ("/tmp/downloads", ""), ("/tmp/downloads", "a/b"), ("/tmp/downloads", "/file"), ("/tmp/downloads", "file/"),
            ("a", "."), ("/tmp", ".."),
        ] as [(String, String)])
    func child(_ directory: String, _ name: String) {
        #expect(
            FileSystem.child(name, of: directory) == (directory as NSString).appendingPathComponent(name),
            "\(directory) + \(name)")
    }
}
