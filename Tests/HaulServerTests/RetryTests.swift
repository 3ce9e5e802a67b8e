import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

/// Retry as aria2's clients do it (AriaNg's `retryTask`): `system.multicall` of `tellStatus` and `getOption` on the
/// failed download, `addUri` with its URIs and options, then `removeDownloadResult` of the failed GID.
@Suite("retry as AriaNg does it")
struct RetryTests {
    @Test("addUri with a failed download's URIs and options starts a new download under a new GID")
    func ariaNgRetry() async throws {
        let harness = try await DaemonHarness.make()
        let late = harness.origin.url("/late.bin")
        let mirror = harness.origin.url("/late-copy.bin")
        let manager = harness.manager
        try await harness.test { client in
            let failed = try #require(
                try await client.rpc(
                    "aria2.addUri",
                    [
                        [.string(late.absoluteString), .string(mirror.absoluteString)],
                        ["out": "late.bin", "http-user": "ann", "http-passwd": "pw", "header": "X-Token: t0ken"],
                    ]
                ).result?.stringValue)
            _ = try await client.waitForStatus(failed, "error")
            _ = harness.origin.serve("/late.bin", size: 120_000)

            // AriaNg: the failed download's status and options in one multicall.
            let read = try await client.rpc(
                "system.multicall",
                [
                    [
                        ["methodName": "aria2.tellStatus", "params": ["token:s3cret", .string(failed)]],
                        ["methodName": "aria2.getOption", "params": ["token:s3cret", .string(failed)]],
                    ]
                ], token: nil)
            let status = try #require(read.result?.arrayValue?.first?.arrayValue?.first)
            let options = try #require(read.result?.arrayValue?.last?.arrayValue?.first)
            #expect(options["http-passwd"] == "***", "getOption masks the password")
            let uris = (status["files"]?.arrayValue?.first?["uris"]?.arrayValue ?? []).compactMap { $0["uri"] }
            #expect(uris == [.string(late.absoluteString), .string(mirror.absoluteString)])

            let added = try #require(try await client.rpc("aria2.addUri", [.array(uris), options]).result?.stringValue)
            #expect(added != failed, "a retry is a new download with a new GID, as in aria2")
            // The failed result stays until it is removed, as aria2 keeps it.
            let kept = try await client.rpc("aria2.tellStatus", [.string(failed), ["status", "errorCode"]])
            #expect(kept.result?["status"] == "error")
            let stopped = try await client.rpc("aria2.tellStopped", [0, 10, ["gid", "status"]])
            #expect(stopped.result?.arrayValue?.contains(["gid": .string(failed), "status": "error"]) == true)
            #expect(try await client.rpc("aria2.removeDownloadResult", [.string(failed)]).result == "OK")
            #expect(try await client.rpc("aria2.tellStatus", [.string(failed)]).error != nil)

            _ = try await client.waitForStatus(added, "complete")
            let id = DownloadID(rawValue: Int64(bitPattern: try #require(UInt64(added, radix: 16))))
            let retried = try #require(await manager.snapshot(id))
            #expect(
                retried.options.credentials == Credentials(user: "ann", password: "pw"),
                "the masked password is the real one")
            #expect(retried.options.headers == [HTTPHeaderField(name: "X-Token", value: "t0ken")])
            #expect(retried.options.mirrors == [mirror])
        }
    }

    @Test("adding a URL again that did not fail still answers with its download, as before")
    func notFailed() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/twice.bin", size: 10_000)
        try await harness.test { client in
            let first = try #require(
                try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["pause": "true"]]).result?
                    .stringValue)
            let second = try await client.rpc("aria2.addUri", [[.string(url.absoluteString)], ["pause": "true"]])
            #expect(second.result?.stringValue == first)
        }
    }
}
