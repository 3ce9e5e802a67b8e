import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// `haul get` over a server that states digests: exit 0 and "verified: …" when they match, exit 3 and
    /// `serverDigestMismatch` when they do not, at -x 1 and -x 4.
    @Suite("haul and server digests")
    struct ServerDigestCommandTests {
        static let size = 3 * 1024 * 1024 + 5

        static func get(
            _ fields: [TestOrigin.DigestField], connections: Int, extra: [String] = []
        ) async throws -> (result: (status: Int32, output: String, error: String), directory: TemporaryDirectory) {
            let origin = try await TestOrigin.start()
            var resource = TestOrigin.Resource(size: size)
            resource.digests = fields
            origin.serve("/d.bin", resource)
            let directory = TemporaryDirectory()
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-x", String(connections), origin.url("/d.bin").absoluteString, "-o",
                    directory.file("d.bin").path, "--state-dir", directory.file("state").path,
                ] + extra)
            await origin.stop()
            return (result, directory)
        }

        @Test("a right Repr-Digest: exit 0, and the last line says what verified the file", arguments: [1, 4])
        func right(connections: Int) async throws {
            let (result, directory) = try await Self.get([.init(.reprDigest)], connections: connections)
            #expect(result.status == 0, "\(result.error)")
            #expect(result.error.contains("verified: sha-256 from the server (Repr-Digest)"), "\(result.error)")
            let data = try Data(contentsOf: directory.file("d.bin"))
            #expect(TestContent.firstMismatch([UInt8](data), size: Self.size) == nil)
            let info = try await ChildProcess.run(
                "haul", ["list", "--json", "--state-dir", directory.file("state").path])
            #expect(info.output.contains("sha-256 from the server (Repr-Digest)"), "\(info.output)")
        }

        @Test(
            "a wrong digest never exits 0: exit 3, serverDigestMismatch in --json",
            arguments: [1, 4], [TestOrigin.DigestHeader.reprDigest, .contentMD5, .googHash])
        func wrong(connections: Int, header: TestOrigin.DigestHeader) async throws {
            let (result, directory) = try await Self.get(
                [.init(header, wrong: true)], connections: connections, extra: ["--json"])
            #expect(result.status == 3, "\(result.error)")
            #expect(result.output.contains("\"name\":\"serverDigestMismatch\""), "\(result.output)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("d.bin").path))
        }

        @Test("--no-verify-server-digest completes over a wrong digest and says it was not checked")
        func turnedOff() async throws {
            let (result, _) = try await Self.get(
                [.init(.reprDigest, wrong: true)], connections: 4, extra: ["--no-verify-server-digest"])
            #expect(result.status == 0, "\(result.error)")
            #expect(result.error.contains("not verified"), "\(result.error)")
        }

        @Test("no digest: the last line says the server sent none")
        func none() async throws {
            let (result, _) = try await Self.get([], connections: 4, extra: ["--json"])
            #expect(result.status == 0, "\(result.error)")
            #expect(result.output.contains("not verified: the server sent no digest"), "\(result.output)")
        }
    }
}
