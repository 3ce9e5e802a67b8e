import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

@Suite("Daemon restarts")
struct RestartTests {
    @Test("a restart keeps every download: same GID, same state, progress reported before it is resumed")
    func restart() async throws {
        let directory = TemporaryDirectory()
        let first = try await DaemonHarness.make(directory: directory)
        let url = first.origin.serve("/r.bin", size: 2_000_000)
        first.origin.setFaults { $0.bytesPerSecond = 1_000_000 }
        let gid = try await first.daemon.makeApplication().test(.router) { client in
            let gid = try #require(
                try await client.rpc("aria2.addUri", [[.string(url.absoluteString)]]).result?.stringValue)
            _ = try await client.waitForStatus(gid, "active")
            try await Task.sleep(for: .milliseconds(1_200))
            #expect(try await client.rpc("aria2.pause", [.string(gid)]).result?.stringValue == gid)
            return gid
        }
        await first.stop()

        let second = try await DaemonHarness.make(directory: directory)
        try await second.test { client in
            let keys: JSONValue = ["gid", "status", "completedLength"]
            let status = try await client.rpc("aria2.tellStatus", [.string(gid), keys])
            #expect(status.result?["gid"]?.stringValue == gid)
            #expect(status.result?["status"] == "paused")
            let completed = Int(status.result?["completedLength"]?.stringValue ?? "") ?? 0
            #expect(completed > 0, "the bytes on disk are reported before the download is resumed")
        }
    }
}
