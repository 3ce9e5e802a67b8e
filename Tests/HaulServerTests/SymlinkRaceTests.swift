import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

/// Issue 45, item 6: `dir` is checked when a download is added; a symbolic link planted below the download directory
/// afterwards (by another local user, a share, a script) must not make Haul write, replace or delete anything outside
/// it. Each test plants the link itself, at the moment that matters.
@Suite("symbolic links planted after the check")
struct SymlinkRaceTests {
    /// Replaces the directory `name` below the downloads with a link to `target` (moving the real one aside if any).
    static func plantLink(_ harness: DaemonHarness, _ name: String, to target: URL) throws {
        let path = harness.downloads.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: path.path) {
            try FileManager.default.moveItem(at: path, to: harness.downloads.appendingPathComponent(name + ".moved"))
        }
        try FileManager.default.createSymbolicLink(at: path, withDestinationURL: target)
    }

    static func outside(_ harness: DaemonHarness) throws -> URL {
        let outside = harness.directory.url.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        return outside
    }

    /// Polls `tellStatus` until the download completes or fails; returns its status.
    static func waitForEnd(_ client: some TestClientProtocol, _ gid: String) async throws -> JSONValue {
        let start = ContinuousClock.now
        while start.duration(to: .now) < .seconds(30) {
            let status = try await client.rpc("aria2.tellStatus", [.string(gid)]).result ?? .null
            if status["status"] == "complete" || status["status"] == "error" { return status }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("\(gid) did not end")
        throw CancellationError()
    }

    @Test(
        "a link planted between the add and the start: no directory, part file or file is made outside",
        arguments: [1_000, 400_000])
    func beforeTheStart(size: Int) async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/s.bin", size: size)
        let outside = try Self.outside(harness)
        try await harness.test { client in
            let gid = try #require(
                try await client.rpc(
                    "aria2.addUri", [[.string(url.absoluteString)], ["dir": "sub/deeper", "pause": "true"]]
                ).result?.stringValue)
            try Self.plantLink(harness, "sub", to: outside)
            #expect(try await client.rpc("aria2.unpause", [.string(gid)]).result?.stringValue == gid)
            let status = try await Self.waitForEnd(client, gid)
            #expect(status["status"] == "error")
            #expect(status["errorMessage"]?.stringValue?.contains("symbolic link") == true, "\(status)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    @Test("a link planted while the file downloads: the finished file does not replace a file outside")
    func beforeTheRename() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/f.bin", size: 1_500_000)
        harness.origin.setFaults { $0.bytesPerSecond = 1_000_000 }
        let outside = try Self.outside(harness)
        let victim = outside.appendingPathComponent("f.bin")
        try Data("the owner's file".utf8).write(to: victim)
        try Data("the attacker's file".utf8).write(to: outside.appendingPathComponent("f.bin.part"))
        let part = harness.downloads.appendingPathComponent("sub/f.bin.part").path
        try await harness.test { client in
            let gid = try #require(
                try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["dir": "sub"]]).result?
                    .stringValue)
            #expect(try await waitForFile(part, atLeast: 100_000, timeout: .seconds(30)))
            try Self.plantLink(harness, "sub", to: outside)
            let status = try await Self.waitForEnd(client, gid)
            #expect(status["status"] == "error")
            #expect(status["errorMessage"]?.stringValue?.contains("symbolic link") == true, "\(status)")
        }
        #expect(String(decoding: try Data(contentsOf: victim), as: UTF8.self) == "the owner's file")
    }

    @Test("a link planted before a remove: the part file's namesake outside is not deleted")
    func beforeTheRemoval() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/g.bin", size: 4_000_000)
        harness.origin.setFaults { $0.bytesPerSecond = 500_000 }
        let outside = try Self.outside(harness)
        let namesake = outside.appendingPathComponent("g.bin.part")
        try Data("keep me".utf8).write(to: namesake)
        let part = harness.downloads.appendingPathComponent("sub/g.bin.part").path
        try await harness.test { client in
            let gid = try #require(
                try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["dir": "sub"]]).result?
                    .stringValue)
            #expect(try await waitForFile(part, atLeast: 50_000, timeout: .seconds(30)))
            try Self.plantLink(harness, "sub", to: outside)
            _ = try await client.rpc("aria2.remove", [.string(gid)])
        }
        #expect(FileManager.default.fileExists(atPath: namesake.path))
    }
}
