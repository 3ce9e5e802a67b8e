import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// `haul verify` names the bad pieces of a file downloaded from a Metalink; `haul repair FILE` fetches only those.
    @Suite("haul repair")
    struct RepairCommandTests {
        @Test("verify lists the bad pieces (exit 3); repair FILE fetches only them; verify is then clean")
        func repairsByFile() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let size = 4 * 1024 * 1024 + 11
            let url = origin.serve("/r.bin", size: size)
            try TestContent.metalink(name: "r.bin", size: size, urls: [url], pieceLength: 64 * 1024)
                .write(to: directory.file("r.meta4"), atomically: true, encoding: .utf8)
            let state = ["--state-dir", directory.file("state").path]
            let got = try await ChildProcess.run(
                "haul", ["get", directory.file("r.meta4").path, "-d", directory.path] + state)
            #expect(got.status == 0, "\(got.error)")
            let file = directory.file("r.bin")
            let handle = try FileHandle(forUpdating: file)
            try handle.seek(toOffset: 3 * 64 * 1024 + 100)
            try handle.write(contentsOf: Data(repeating: 0xAA, count: 100))
            try handle.close()
            let before = origin.bodyBytesSent(to: "/r.bin")

            let verify = try await ChildProcess.run("haul", ["verify", "--all"] + state)
            #expect(verify.status == 3, "\(verify.output)")
            #expect(verify.output.contains("bad pieces: 3 ('haul repair 1' fetches only those)"), "\(verify.output)")

            let repair = try await ChildProcess.run("haul", ["repair", file.path] + state)
            #expect(repair.status == 0, "\(repair.error)")
            #expect(repair.output.contains("1 of 65 pieces were bad (3)"), "\(repair.output)")
            #expect(origin.bodyBytesSent(to: "/r.bin") - before == 64 * 1024)
            let data = try Data(contentsOf: file)
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            let again = try await ChildProcess.run("haul", ["verify", "--all"] + state)
            #expect(again.status == 0, "\(again.output)")
            await origin.stop()
        }
    }
}
