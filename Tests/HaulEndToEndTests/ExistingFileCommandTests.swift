import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    @Suite("haul and a file already there")
    struct ExistingFileCommandTests {
        @Test("-o replaces, -d saves beside it, --no-clobber keeps it, --overwrite replaces, -N replaces only older")
        func policies() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let url = origin.serve("/f.bin", size: 40_000).absoluteString
            let mine = Data("mine\n".utf8)
            func run(_ arguments: [String], state: String) async throws -> Int32 {
                let result = try await ChildProcess.run(
                    "haul", ["get", "-q", url] + arguments + ["--state-dir", directory.file(state).path])
                #expect(result.status == 0, "\(result.error)")
                return result.status
            }
            let target = directory.file("f.bin")
            try mine.write(to: target)
            _ = try await run(["-d", directory.path, "--no-clobber"], state: "s1")
            #expect(try Data(contentsOf: target) == mine)
            #expect(origin.requests(to: "/f.bin").count <= 1)  // the name comes from the answer; no body is kept
            _ = try await run(["-o", target.path, "--no-clobber"], state: "s2")
            #expect(try Data(contentsOf: target) == mine)
            _ = try await run(["-d", directory.path], state: "s3")
            #expect(try Data(contentsOf: target) == mine)
            #expect(FileManager.default.fileExists(atPath: directory.file("f (1).bin").path))
            _ = try await run(["-d", directory.path, "--overwrite"], state: "s4")
            #expect(TestContent.firstMismatch([UInt8](try Data(contentsOf: target)), size: 40_000) == nil)
            try mine.write(to: target)
            _ = try await run(["-o", target.path], state: "s5")
            #expect(TestContent.firstMismatch([UInt8](try Data(contentsOf: target)), size: 40_000) == nil)
            // -N: the server's copy (2023-11-14) is older than a file touched now: kept; newer than one from 2001:
            // replaced, with the server's time.
            try mine.write(to: target)
            _ = try await run(["-o", target.path, "-N"], state: "s7")
            #expect(try Data(contentsOf: target) == mine)
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)], ofItemAtPath: target.path)
            _ = try await run(["-o", target.path, "-N"], state: "s8")
            #expect(TestContent.firstMismatch([UInt8](try Data(contentsOf: target)), size: 40_000) == nil)
            let time = try FileManager.default.attributesOfItem(atPath: target.path)[.modificationDate] as? Date
            #expect(time == Date(timeIntervalSince1970: 1_700_000_000))
            let both = try await ChildProcess.run(
                "haul", ["get", url, "--no-clobber", "--overwrite", "--state-dir", directory.file("s6").path])
            #expect(both.status == 64)
            await origin.stop()
        }
    }
}
