import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// `haul get FILE.meta4`, `-M FILE` and the URL of a .meta4.
    @Suite("haul and Metalinks")
    struct MetalinkCommandTests {
        @Test("a .meta4 file, -M and a .meta4 URL: each file saved by its name, exact; the last line says Metalink")
        func metalinks() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let size = 1_500_000
            let file = origin.serve("/f.bin", size: size)
            let text = TestContent.metalink(name: "f.bin", size: size, urls: [file], pieceLength: 256 * 1024)
            try text.write(to: directory.file("f.meta4"), atomically: true, encoding: .utf8)
            for (index, arguments) in [[directory.file("f.meta4").path], ["-M", directory.file("f.meta4").path]]
                .enumerated()
            {
                let result = try await ChildProcess.run(
                    "haul",
                    ["get"] + arguments + [
                        "-d", directory.file("out\(index)").path, "--state-dir", directory.file("s\(index)").path,
                    ])
                #expect(result.status == 0, "\(result.error)")
                #expect(result.error.contains("from the Metalink"), "\(result.error)")
                let data = try Data(contentsOf: directory.file("out\(index)/f.bin"))
                #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            }
            var document = TestOrigin.Resource(size: 0)
            document.body = Array(text.utf8)
            let address = origin.serve("/f.meta4", document)
            let fetched = try await ChildProcess.run(
                "haul",
                [
                    "get", address.absoluteString, "-d", directory.file("out2").path, "--state-dir",
                    directory.file("s2").path,
                ])
            #expect(fetched.status == 0, "\(fetched.error)")
            let data = try Data(contentsOf: directory.file("out2/f.bin"))
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            // haul add queues a Metalink's files too.
            let added = try await ChildProcess.run(
                "haul",
                [
                    "add", directory.file("f.meta4").path, "-d", directory.file("out3").path, "--state-dir",
                    directory.file("s3").path,
                ])
            #expect(added.status == 0, "\(added.error)")
            #expect(added.output.contains("queued \(file.absoluteString)"), "\(added.output)")
            await origin.stop()
        }

        @Test("a hostile Metalink is refused before anything is fetched (exit 64, with the reason)")
        func hostile() async throws {
            let directory = TemporaryDirectory()
            let bomb = """
                <?xml version="1.0"?>
                <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
                <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="&lol1;"/></metalink>
                """
            try bomb.write(to: directory.file("bomb.meta4"), atomically: true, encoding: .utf8)
            let result = try await ChildProcess.run(
                "haul", ["get", directory.file("bomb.meta4").path, "--state-dir", directory.file("s").path])
            #expect(result.status == 64, "\(result.error)")
            #expect(result.error.contains("entities"), "\(result.error)")
        }
    }
}
