import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

/// Issue 45, item 7: over RPC, `haul.remove(gid, true)` deletes a file only if its real path is inside the download
/// directory; a download a command added elsewhere keeps its file.
@Suite("deleting files over RPC")
struct RemoveOutsideTests {
    @Test("a completed download outside the download directory: its file is not deleted; one inside is")
    func outside() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/o.bin", size: 2_000)
        let elsewhere = harness.directory.url.appendingPathComponent("elsewhere/o.bin")
        try FileManager.default.createDirectory(
            at: elsewhere.deletingLastPathComponent(), withIntermediateDirectories: true)
        // As `haul add -o` would: the library, no jail.
        let id = try await harness.manager.add(url, to: .file(elsewhere))
        let manager = harness.manager
        try await harness.test { client in
            let gid = GID(id).description
            _ = try await client.waitForStatus(gid, "complete")
            let refused = try await client.rpc("haul.remove", [.string(gid), true])
            #expect(refused.errorMessage?.contains("outside the download directory") == true, "\(refused.body)")
            #expect(FileManager.default.fileExists(atPath: elsewhere.path))
            #expect(await manager.snapshot(id) != nil, "nothing was removed")
            #expect(try await client.rpc("haul.remove", [.string(gid), false]).result == "OK")
            #expect(FileManager.default.fileExists(atPath: elsewhere.path))

            let inside = try #require(
                try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["out": "i.bin"]]).result?
                    .stringValue)
            _ = try await client.waitForStatus(inside, "complete")
            #expect(try await client.rpc("haul.remove", [.string(inside), true]).result == "OK")
            #expect(!FileManager.default.fileExists(atPath: harness.downloads.appendingPathComponent("i.bin").path))
        }
    }
}
