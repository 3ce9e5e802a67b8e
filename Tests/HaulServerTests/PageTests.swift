import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

/// `haul.page` and `haul.details`: the dashboard's server-side paging, filtering and search, counts by Haul's states.
@Suite("haul.page and haul.details")
struct PageTests {
    @Test("counts by Haul's states (paused apart from queued); states, search, sort and paging on the server")
    func page() async throws {
        let harness = try await DaemonHarness.make()
        let origin = harness.origin
        try await harness.test { client in
            let done = try #require(
                try await client.rpc(
                    "aria2.addUri", [[.string(origin.serve("/alpha.iso", size: 5_000).absoluteString)]]
                )
                .result?.stringValue)
            _ = try await client.waitForStatus(done, "complete")
            var paused: [String] = []
            for name in ["charlie.bin", "bravo.bin", "delta.bin"] {
                let url = origin.serve("/files/\(name)", size: 1_000)
                paused.append(
                    try #require(
                        try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["pause": "true"]]).result?
                            .stringValue))
            }
            let all = try await client.rpc("haul.page", [[:]])
            let counts = try #require(all.result?["counts"])
            #expect(
                counts["paused"] == 3 && counts["queued"] == 0 && counts["completed"] == 1 && counts["running"] == 0)
            #expect(all.result?["total"] == 4)
            let rows = all.result?["downloads"]?.arrayValue ?? []
            // Queue order: waiting (paused) first in queue order, then finished.
            #expect(rows.compactMap { $0["gid"]?.stringValue } == paused + [done])
            #expect(rows.first?["name"] == "charlie.bin" && rows.first?["state"] == "paused")
            #expect(rows.first?["position"] == 0 && rows.last?["state"] == "completed")
            #expect(all.result?["freeBytes"]?.stringValue.flatMap { Int64($0) }.map { $0 > 0 } == true)
            #expect(all.result?["speedHistory"]?.arrayValue?.count == ActivityLog.seconds)

            let filtered = try await client.rpc("haul.page", [["states": ["completed"]]])
            #expect(filtered.result?["downloads"]?.arrayValue?.map { $0["gid"] } == [.string(done)])
            let searched = try await client.rpc("haul.page", [["search": "BRAVO"]])
            #expect(searched.result?["downloads"]?.arrayValue?.map { $0["gid"] } == [.string(paused[1])])
            let byURL = try await client.rpc("haul.page", [["search": "/files/"]])
            #expect(byURL.result?["total"] == 3)
            let sorted = try await client.rpc("haul.page", [["sort": "name", "offset": 1, "count": 2]])
            #expect(
                sorted.result?["downloads"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == [
                    "bravo.bin", "charlie.bin",
                ])
            #expect(sorted.result?["total"] == 4)
            let reversed = try await client.rpc("haul.page", [["sort": "name", "descending": true, "count": 1]])
            #expect(reversed.result?["downloads"]?.arrayValue?.first?["name"] == "delta.bin")
            #expect(try await client.rpc("haul.page", [["states": ["waiting"]]]).error != nil)
            #expect(try await client.rpc("haul.page", [["count": 0]]).error != nil)

            let details = try await client.rpc("haul.details", [.string(done)])
            #expect(details.result?["file"]?.stringValue?.hasSuffix("/alpha.iso") == true)
            #expect(details.result?["digest"]?["sha256"]?.stringValue == TestContent.sha256(size: 5_000))
            #expect(details.result?["sources"]?.arrayValue?.first?["role"] == "download URL")
            #expect(details.result?["aria2"]?["status"] == "complete")
            let history = details.result?["history"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
            #expect(history.contains("completed"), "\(history)")
        }
    }

    @Test("changeOption sets a download's connections (split), as aria2 lets it")
    func connections() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/c.bin", size: 1_000)
        try await harness.test { client in
            let gid = try #require(
                try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["pause": "true"]]).result?
                    .stringValue)
            #expect(try await client.rpc("aria2.changeOption", [.string(gid), ["split": "6"]]).result == "OK")
            #expect(try await client.rpc("aria2.getOption", [.string(gid)]).result?["split"] == "6")
            #expect(try await client.rpc("aria2.changeOption", [.string(gid), ["split": "40"]]).error != nil)
        }
    }

    /// The download a GID names (16 hex digits).
    static func id(_ gid: String) -> DownloadID? {
        UInt64(gid, radix: 16).map { DownloadID(rawValue: Int64(bitPattern: $0)) }
    }

    @Test("addUri without split or max-connection-per-server chooses the count by measurement; either fixes it")
    func automaticConnections() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/auto.bin", size: 1_000)
        let manager = harness.manager
        try await harness.test { client in
            func options(_ extra: [String: JSONValue]) async throws -> DownloadOptions {
                var given: [String: JSONValue] = ["pause": "true"]
                given.merge(extra) { $1 }
                let gid = try #require(
                    try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], .object(given)]).result?
                        .stringValue)
                let id = try #require(Self.id(gid))
                return try #require(await manager.snapshot(id)).options
            }
            let automatic = try await options([:])
            #expect(automatic.adaptiveConnections && automatic.connections == 16)
            let split = try await options(["split": "5", "out": "s.bin"])
            #expect(!split.adaptiveConnections && split.connections == 5)
            let perServer = try await options(["split": "5", "max-connection-per-server": "2", "out": "p.bin"])
            #expect(!perServer.adaptiveConnections && perServer.connections == 2)
            // changeOption's number fixes an automatic download's count too.
            let gid = try #require(
                try await client.rpc(
                    "aria2.addUri", [[.string(url.absoluteString)], ["pause": "true", "out": "c.bin"]]
                )
                .result?.stringValue)
            #expect(try await client.rpc("aria2.changeOption", [.string(gid), ["split": "3"]]).result == "OK")
            let changedID = try #require(Self.id(gid))
            let changed = try #require(await manager.snapshot(changedID)).options
            #expect(!changed.adaptiveConnections && changed.connections == 3)
        }
    }

    @Test("haul.subscribe with GIDs: progress of those downloads only")
    func watchList() {
        #expect(NotificationHub.watchList([]) == nil)
        #expect(NotificationHub.watchList([["000000000000000a", "x", 3]]) == [DownloadID(rawValue: 10)])
        #expect(NotificationHub.watchList([[]]) == [])
    }
}
