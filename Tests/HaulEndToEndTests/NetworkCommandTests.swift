import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// What `haul get` says while it works, and how it reaches the network.
    @Suite("haul's messages and network options")
    struct NetworkCommandTests {
        @Test("status lines go to standard error; -v adds requests and responses; --debug headers, secrets masked")
        func messagesOnStandardError() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/m.bin", size: 100_000)
            let directory = TemporaryDirectory()
            func get(_ name: String, _ extra: [String]) async throws -> (status: Int32, output: String, error: String) {
                try await ChildProcess.run(
                    "haul",
                    [
                        "get", url.absoluteString, "-o", directory.file(name).path, "--state-dir",
                        directory.file(name + ".state").path,
                    ]
                        + extra)
            }
            let plain = try await get("plain.bin", [])
            #expect(plain.status == 0 && plain.output.isEmpty, "\(plain.output)")
            #expect(plain.error.contains("saved"), "\(plain.error)")
            #expect(!plain.error.contains("request"), "no log lines without -v")

            let verbose = try await get("verbose.bin", ["-v"])
            #expect(verbose.status == 0 && verbose.output.isEmpty)
            #expect(verbose.error.contains("request") && verbose.error.contains("range=bytes=0-"), "\(verbose.error)")
            #expect(verbose.error.contains("status=200") || verbose.error.contains("status=206"), "\(verbose.error)")
            #expect(verbose.error.contains("decision="), "\(verbose.error)")

            let debug = try await get(
                "debug.bin",
                [
                    "--debug", "-H", "Authorization: Bearer s3cret", "-H", "Cookie: id=hidden", "-H",
                    "X-Api-Key: k3y",
                ])
            #expect(debug.status == 0)
            #expect(debug.error.contains("Authorization: ***") && debug.error.contains("Cookie: ***"), "\(debug.error)")
            #expect(debug.error.contains("Content-Length: 100000"), "response headers are shown: \(debug.error)")
            #expect(!debug.error.contains("s3cret") && !debug.error.contains("hidden"))
            // Any header that -H calls a credential (a name with key, token, secret…), as `list` masks it.
            #expect(debug.error.contains("X-Api-Key: ***") && !debug.error.contains("k3y"), "\(debug.error)")
            await origin.stop()
        }

        @Test("--connect-timeout bounds a connection that is never answered")
        func connectTimeout() async throws {
            let silent = try UnansweredPort()
            let directory = TemporaryDirectory()
            let started = ContinuousClock.now
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", silent.url("/x.bin").absoluteString, "-o", directory.file("x.bin").path,
                    "--connect-timeout", "1", "--retries", "2", "--state-dir", directory.file("state").path,
                ])
            let elapsed = started.duration(to: .now)
            #expect(result.status == 6, "a network failure: \(result.error)")
            #expect(result.error.contains("timed out"), "\(result.error)")
            // Two attempts of one second and a backoff, against the default 30 s each.
            #expect(elapsed < .seconds(15), "\(elapsed)")
        }

        @Test(
            "--proxy socks5h:// and $all_proxy send requests through a SOCKS5 proxy",
            .enabled(if: SocksProxy.executable != nil, "microsocks is not installed (.ci/run installs it)"))
        func socks() async throws {
            let proxy = try await SocksProxy.start()
            let origin = try await TestOrigin.start()
            let size = 2_000_000
            let url = origin.serve("/socks.bin", size: size)
            let directory = TemporaryDirectory()
            let flag = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "-x", "2", url.absoluteString, "-o", directory.file("a.bin").path, "--proxy",
                    proxy.url.absoluteString, "--state-dir", directory.file("state").path,
                ])
            #expect(flag.status == 0, "\(flag.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("a.bin")), size: size) == nil)
            let viaFlag = origin.requests(to: "/socks.bin")
            #expect(
                !viaFlag.isEmpty && viaFlag.allSatisfy { $0.peer == proxy.outgoingAddress }, "\(viaFlag.map(\.peer))")

            let environment = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", url.absoluteString, "-o", directory.file("b.bin").path, "--state-dir",
                    directory.file("state").path,
                ], environment: ["all_proxy": proxy.url.absoluteString, "no_proxy": "", "NO_PROXY": ""])
            #expect(environment.status == 0, "\(environment.error)")
            #expect(
                origin.requests(to: "/socks.bin").dropFirst(viaFlag.count).allSatisfy {
                    $0.peer == proxy.outgoingAddress
                })

            proxy.stop()
            let down = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "--retries", "1", url.absoluteString, "-o", directory.file("c.bin").path, "--proxy",
                    proxy.url.absoluteString, "--state-dir", directory.file("state").path,
                ])
            #expect(down.status == 6, "no way around a proxy that is down: \(down.error)")
            await origin.stop()
        }
    }
}
