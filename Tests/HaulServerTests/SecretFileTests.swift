import Foundation
import HaulTestSupport
import Testing

@testable import HaulServer

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
