import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

/// aria2's methods over real downloads from the test origin.
@Suite("aria2 methods")
struct MethodTests {
    @Test("addUri downloads into dir/out; tellStatus, key filters, getFiles, getUris and tellStopped describe it")
    func addAndDescribe() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/a.bin", size: 300_000)
        let downloads = harness.downloads
        try await harness.test { client in
            let added = try await client.rpc(
                "aria2.addUri", [[.string(url.absoluteString)], ["dir": "sub", "out": "a.bin", "split": "2"]])
            let gid = try #require(added.result?.stringValue)
            #expect(gid.count == 16 && gid.allSatisfy(\.isHexDigit))
            let status = try await client.waitForStatus(gid, "complete")
            #expect(status["totalLength"] == "300000" && status["completedLength"] == "300000")
            #expect(status["errorCode"] == "0")
            #expect(status["dir"]?.stringValue == downloads.appendingPathComponent("sub").path)
            let files = try #require(status["files"]?.arrayValue)
            #expect(files.first?["path"]?.stringValue == downloads.appendingPathComponent("sub/a.bin").path)
            expectContent(downloads.appendingPathComponent("sub/a.bin"), size: 300_000)

            let filtered = try await client.rpc("aria2.tellStatus", [.string(gid), ["gid", "status"]])
            #expect(filtered.result == ["gid": .string(gid), "status": "complete"])
            let prefix = try await client.rpc("aria2.tellStatus", [.string(String(gid.prefix(15))), ["gid"]])
            #expect(prefix.result?["gid"]?.stringValue == gid, "a unique prefix names the download")
            let uris = try await client.rpc("aria2.getUris", [.string(gid)])
            #expect(uris.result == [["uri": .string(url.absoluteString), "status": "used"]])
            let stopped = try await client.rpc("aria2.tellStopped", [0, 10, ["gid"]])
            #expect(stopped.result == [["gid": .string(gid)]])
            #expect(try await client.rpc("aria2.removeDownloadResult", [.string(gid)]).result == "OK")
            #expect(try await client.rpc("aria2.tellStopped", [0, 10]).result == [])
            #expect(FileManager.default.fileExists(atPath: downloads.appendingPathComponent("sub/a.bin").path))
            // Several URIs are one file from mirrors; changeUri edits the mirrors, never the download's own URL.
            let mirror = "http://127.0.0.1:9/a.bin"
            let mirrored = try #require(
                try await client.rpc(
                    "aria2.addUri",
                    [[.string(url.absoluteString), .string(mirror)], ["out": "m.bin", "pause": "true"]]
                ).result?.stringValue)
            let both = try await client.rpc("aria2.getUris", [.string(mirrored)])
            #expect(both.result?.arrayValue?.compactMap { $0["uri"]?.stringValue } == [url.absoluteString, mirror])
            let changed = try await client.rpc(
                "aria2.changeUri", [.string(mirrored), 1, [.string(mirror)], ["http://127.0.0.1:9/b.bin"]])
            #expect(changed.result == [1, 1])
            let after = try await client.rpc("aria2.getUris", [.string(mirrored)])
            #expect(
                after.result?.arrayValue?.compactMap { $0["uri"]?.stringValue } == [
                    url.absoluteString, "http://127.0.0.1:9/b.bin",
                ])
            let refused = try await client.rpc(
                "aria2.changeUri", [.string(mirrored), 1, [.string(url.absoluteString)], []])
            #expect(refused.error != nil)
        }
    }

    @Test("pause on add, unpause, and aria2's errors for a state that does not allow it")
    func pauseAndUnpause() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/p.bin", size: 100_000)
        try await harness.test { client in
            let gid = try #require(
                try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["pause": "true"]]).result?
                    .stringValue)
            #expect(try await client.rpc("aria2.tellStatus", [.string(gid)]).result?["status"] == "paused")
            let waiting = try await client.rpc("aria2.tellWaiting", [0, 10, ["gid", "status"]])
            #expect(waiting.result == [["gid": .string(gid), "status": "paused"]])
            #expect(
                try await client.rpc("aria2.pause", [.string(gid)]).errorMessage == "GID#\(gid) cannot be paused now")
            #expect(try await client.rpc("aria2.unpause", [.string(gid)]).result?.stringValue == gid)
            _ = try await client.waitForStatus(gid, "complete")
            #expect(
                try await client.rpc("aria2.unpause", [.string(gid)]).errorMessage
                    == "GID#\(gid) cannot be unpaused now")
            #expect(
                try await client.rpc("aria2.remove", [.string(gid)]).errorMessage
                    == "Active Download not found for GID#\(gid)")
        }
    }

    @Test("remove keeps a 'removed' result until it is purged; pauseAll leaves nothing active")
    func removeAndPurge() async throws {
        let harness = try await DaemonHarness.make()
        let slow = harness.origin.serve("/slow.bin", size: 4_000_000)
        harness.origin.setFaults { $0.bytesPerSecond = 200_000 }
        try await harness.test { client in
            let first = try #require(
                try await client.rpc("aria2.addUri", [[.string(slow.absoluteString)]]).result?.stringValue)
            _ = try await client.waitForStatus(first, "active")
            #expect(try await client.rpc("aria2.pauseAll").result == "OK")
            #expect(try await client.rpc("aria2.tellActive").result == [], "after pauseAll returns, nothing is active")
            #expect(try await client.rpc("aria2.remove", [.string(first)]).result?.stringValue == first)
            let removed = try await client.rpc("aria2.tellStatus", [.string(first), ["status", "errorCode"]])
            #expect(removed.result == ["status": "removed", "errorCode": "31"])
            let stat = try await client.rpc("aria2.getGlobalStat")
            #expect(stat.result?["numStopped"] == "1")
            #expect(try await client.rpc("aria2.purgeDownloadResult").result == "OK")
            #expect(
                try await client.rpc("aria2.tellStatus", [.string(first)]).errorMessage == "GID \(first) is not found")
        }
    }

    @Test("dir and out stay inside the download directory: no '..', no other absolute path, no link out")
    func jail() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/j.bin", size: 1_000)
        let outside = harness.directory.url.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: harness.downloads.appendingPathComponent("link"), withDestinationURL: outside)
        try await harness.test { client in
            for options: JSONValue in [
                ["dir": "../outside"], ["dir": .string(outside.path)], ["out": "../x.bin"], ["out": "/etc/x"],
                ["dir": "link"], ["out": "link/x.bin"],
            ] {
                let answer = try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], options])
                #expect(answer.status == 400, "\(options.jsonText) must be refused")
            }
            #expect(try await client.rpc("aria2.tellWaiting", [0, 10]).result == [])
            let inside = try await client.rpc(
                "aria2.addUri", [[.string(url.absoluteString)], ["dir": .string(harness.downloads.path + "/in")]])
            #expect(inside.result?.stringValue != nil, "an absolute dir inside the download directory is fine")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    @Test("global options change the manager; changePosition moves a waiting download; negative offsets reverse")
    func optionsAndPositions() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/w.bin", size: 1_000)
        try await harness.test { client in
            let change = try await client.rpc(
                "aria2.changeGlobalOption", [["max-concurrent-downloads": "2", "max-overall-download-limit": "1M"]])
            #expect(change.result == "OK")
            let global = try await client.rpc("aria2.getGlobalOption")
            #expect(global.result?["max-concurrent-downloads"] == "2")
            #expect(global.result?["max-overall-download-limit"] == "1048576")
            #expect(try await client.rpc("aria2.changeGlobalOption", [["log": "/tmp/x"]]).status == 400)
            var gids: [String] = []
            for index in 0..<3 {
                var options: JSONValue = ["pause": "true", "out": .string("w\(index).bin")]
                if index == 0 { options = ["pause": "true", "out": "w0.bin", "http-user": "ann", "http-passwd": "pw"] }
                gids.append(
                    try #require(
                        try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], options]).result?
                            .stringValue))
            }
            let moved = try await client.rpc("aria2.changePosition", [.string(gids[2]), 0, "POS_SET"])
            #expect(moved.result == 0)
            let order = try await client.rpc("aria2.tellWaiting", [0, 10, ["gid"]])
            #expect(order.result?.arrayValue?.compactMap { $0["gid"]?.stringValue } == [gids[2], gids[0], gids[1]])
            let reversed = try await client.rpc("aria2.tellWaiting", [-1, 2, ["gid"]])
            #expect(reversed.result?.arrayValue?.compactMap { $0["gid"]?.stringValue } == [gids[1], gids[0]])
            let option = try await client.rpc("aria2.changeOption", [.string(gids[0]), ["max-download-limit": "500K"]])
            #expect(option.result == "OK")
            let options = try await client.rpc("aria2.getOption", [.string(gids[0])]).result
            #expect(options?["max-download-limit"] == "512000")
            #expect(options?["http-user"] == "ann")
            #expect(options?["http-passwd"] == "***")
        }
    }
}

/// Checks that `file` holds the test origin's `size` bytes.
func expectContent(_ file: URL, size: Int, sourceLocation: SourceLocation = #_sourceLocation) {
    guard let data = FileManager.default.contents(atPath: file.path) else {
        Issue.record("no file at \(file.path)", sourceLocation: sourceLocation)
        return
    }
    #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil, sourceLocation: sourceLocation)
}
