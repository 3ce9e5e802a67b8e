import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

/// Issue 45, item 13: an over-long or over-deep `dir`, an over-long name, a control character: refused when the
/// download is added, before any directory is made.
@Suite("path lengths")
struct PathLengthTests {
    static let deep = Array(repeating: "d", count: 3_000).joined(separator: "/")

    @Test(
        "refused at once, nothing created",
        arguments: [
            ["dir": .string(deep)], ["dir": .string(Array(repeating: "d", count: 40).joined(separator: "/"))],
            ["dir": .string(String(repeating: "n", count: 256))], ["out": .string(String(repeating: "o", count: 250))],
            ["dir": "a\u{0}b"], ["out": "x\u{0}/../../y"], ["out": "line\nbreak"],
        ] as [JSONValue])
    func refused(_ options: JSONValue) async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/p.bin", size: 1_000)
        let downloads = harness.downloads
        try await harness.test { client in
            let answer = try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], options])
            #expect(answer.status == 400, "\(answer.body)")
            #expect(try await client.rpc("aria2.tellWaiting", [0, 10]).result == [])
            // Time for a download to start, had one been added.
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)
    }

    @Test("within the limits a deep directory is fine")
    func accepted() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/q.bin", size: 1_000)
        let dir = Array(repeating: "d", count: 30).joined(separator: "/")
        try await harness.test { client in
            let gid = try #require(
                try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["dir": .string(dir)]]).result?
                    .stringValue)
            _ = try await client.waitForStatus(gid, "complete")
        }
        expectContent(harness.downloads.appendingPathComponent(dir + "/q.bin"), size: 1_000)
    }
}
