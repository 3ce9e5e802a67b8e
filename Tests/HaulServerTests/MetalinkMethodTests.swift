import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

/// `aria2.addMetalink`: a base64 Metalink, one GID per file; a hostile one refused.
@Suite("aria2.addMetalink")
struct MetalinkMethodTests {
    @Test("two files of a Metalink: two GIDs, each file complete under dir, verified by the Metalink's hash")
    func addsEveryFile() async throws {
        let harness = try await DaemonHarness.make()
        let first = harness.origin.serve("/one.bin", size: 300_000)
        let second = harness.origin.serve("/two.bin", size: 200_001)
        let one = TestContent.metalink(name: "one.bin", size: 300_000, urls: [first], pieceLength: 64 * 1024)
        let two = TestContent.metalink(name: "two.bin", size: 200_001, urls: [second])
        // Both files in one document: the second file element taken from the other.
        let fileTwo = try #require(two.range(of: "<file").map { two[$0.lowerBound...] })
            .components(separatedBy: "</metalink>")[0]
        let document = one.replacingOccurrences(of: "</metalink>", with: fileTwo + "</metalink>")
        let downloads = harness.downloads
        try await harness.test { client in
            let added = try await client.rpc(
                "aria2.addMetalink", [.string(Data(document.utf8).base64EncodedString()), ["dir": "ml"]])
            let gids = (added.result?.arrayValue ?? []).compactMap { $0.stringValue }
            #expect(gids.count == 2, "\(added.body)")
            for (gid, (name, size)) in zip(gids, [("one.bin", 300_000), ("two.bin", 200_001)]) {
                let status = try await client.waitForStatus(gid, "complete")
                #expect(status["verification"]?.stringValue?.contains("from the Metalink") == true, "\(status)")
                expectContent(downloads.appendingPathComponent("ml/\(name)"), size: size)
            }
            let hostile = "<!DOCTYPE x [<!ENTITY a \"b\">]><metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"/>"
            let refused = try await client.rpc(
                "aria2.addMetalink", [.string(Data(hostile.utf8).base64EncodedString())])
            #expect(refused.errorMessage?.contains("entities") == true, "\(refused.body)")
        }
        await harness.stop()
    }
}
