import Foundation
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("RPC secret")
struct SecretFileTests {
    @Test("made on first start, readable only by the owner, and the same on every start after")
    func madeOnce() throws {
        let directory = TemporaryDirectory()
        let state = directory.url.appendingPathComponent("state")
        let first = try SecretFile.secret(in: state)
        #expect(first.count == 48 && first.allSatisfy(\.isHexDigit))
        let attributes = try FileManager.default.attributesOfItem(
            atPath: state.appendingPathComponent(SecretFile.name).path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try SecretFile.secret(in: state) == first)
    }

    @Test("the secret file is never readable by others, not even for a moment while it is made (issue 45, item 8)")
    func neverReadable() async throws {
        // A watcher on the other core looks at every entry of the state directory as fast as it can while the
        // secret is made, many times over: a file created readable and tightened later is caught.
        let seen = Mutex<[String]>([])
        for _ in 0..<150 {
            let directory = TemporaryDirectory()
            let state = directory.url.appendingPathComponent("state")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            let stop = Flag()
            let watching = Flag()
            let watcher = Thread {
                watching.set()
                while !stop.isSet {
                    guard let stream = opendir(state.path) else { continue }
                    while let entry = readdir(stream) {
                        let name = withUnsafeBytes(of: entry.pointee.d_name) {
                            String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                        }
                        guard name != ".", name != ".." else { continue }
                        var info = stat()
                        if lstat(state.path + "/" + name, &info) == 0, info.st_mode & 0o077 != 0 {
                            seen.withLock { $0.append("\(name): \(String(info.st_mode & 0o777, radix: 8))") }
                        }
                    }
                    closedir(stream)
                }
            }
            // Stopped however this round ends: a watcher left spinning would take a core from every other test.
            defer { stop.set() }
            watcher.start()
            while !watching.isSet { try await Task.sleep(for: .milliseconds(1)) }
            _ = try SecretFile.secret(in: state)
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(seen.withLock { $0 }.isEmpty, "\(seen.withLock { $0.prefix(5) })")
    }

    @Test("an empty secret file (a start that died before writing it) is made again; a link there is not followed")
    func emptyAndLink() throws {
        let directory = TemporaryDirectory()
        let state = directory.url.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let file = state.appendingPathComponent(SecretFile.name)
        _ = FileManager.default.createFile(atPath: file.path, contents: Data())
        let secret = try SecretFile.secret(in: state)
        #expect(secret.count == 48)
        try FileManager.default.removeItem(at: file)
        let target = directory.file("elsewhere")
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: target)
        #expect(throws: (any Error).self) { try SecretFile.create(file.path, holding: "x\n") }
        #expect(!FileManager.default.fileExists(atPath: target.path), "nothing written through the link")
    }

    @Test("a secret file given by the user: its first line; an empty one is refused")
    func given() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("secret")
        try Data("  hunter2  \nsecond line\n".utf8).write(to: file)
        #expect(try SecretFile.read(file.path) == "hunter2")
        try Data("\n".utf8).write(to: file)
        #expect(throws: (any Error).self) { try SecretFile.read(file.path) }
    }
}
