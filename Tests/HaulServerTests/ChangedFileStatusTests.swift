import Foundation
import HaulKit
import HaulTestSupport
import Testing

/// The daemon tells a completed download whose file changed on disk, as `haul list` does.
@Suite("tellStatus of a changed file")
struct ChangedFileStatusTests {
    @Test("a completed file that is gone or shorter reads as changed in tellStatus (fileChange); unchanged, no key")
    func fileChange() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/c.bin", size: 200_000)
        let file = harness.downloads.appendingPathComponent("c.bin")
        try await harness.test { client in
            let added = try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["out": "c.bin"]])
            let gid = try #require(added.result?.stringValue)
            let status = try await client.waitForStatus(gid, "complete")
            #expect(status["fileChange"] == nil)
            try FileHandle(forWritingTo: file).truncate(atOffset: 1_000)
            let shorter = try await client.rpc("aria2.tellStatus", [.string(gid)])
            #expect(shorter.result?["fileChange"]?.stringValue?.contains("is 1000 bytes now") == true)
            try FileManager.default.removeItem(at: file)
            let gone = try await client.rpc("aria2.tellStatus", [.string(gid), ["fileChange"]])
            #expect(gone.result == ["fileChange": "is gone"])
        }
        await harness.stop()
    }
}
