import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// `haul get` through a real tinyproxy: `--proxy`, the proxy environment, `--no-proxy`.
    @Suite(
        "haul through a proxy",
        .enabled(if: TinyProxy.executable != nil, "tinyproxy is not installed (.ci/run installs it)"))
    struct ProxyCommandTests {
        @Test("--proxy and $http_proxy send the download through the proxy; --no-proxy and no_proxy do not")
        func proxies() async throws {
            let proxy = try await TinyProxy.start()
            defer { proxy.stop() }
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path, "-q"]
            func get(_ name: String, _ extra: [String], environment: [String: String] = [:]) async throws -> Int32 {
                let url = origin.serve("/\(name)", size: 30_000)
                let result = try await ChildProcess.run(
                    "haul", ["get", url.absoluteString, "-o", directory.file(name).path] + state + extra,
                    environment: environment)
                #expect(result.status == 0 || !extra.isEmpty, "\(result.error)")
                return result.status
            }
            // Nothing set: direct.
            #expect(try await get("direct.bin", [], environment: ["http_proxy": "", "HTTP_PROXY": ""]) == 0)
            #expect(proxy.tunnels(to: origin.port) == 0)
            #expect(try await get("flag.bin", ["--proxy", proxy.url.absoluteString]) == 0)
            #expect(proxy.tunnels(to: origin.port) == 1)
            #expect(try await get("env.bin", [], environment: ["http_proxy": proxy.url.absoluteString]) == 0)
            #expect(proxy.tunnels(to: origin.port) == 2)
            let bypass = ["http_proxy": proxy.url.absoluteString, "no_proxy": "127.0.0.1"]
            #expect(try await get("bypass.bin", [], environment: bypass) == 0)
            #expect(
                try await get("noproxy.bin", ["--no-proxy"], environment: ["http_proxy": proxy.url.absoluteString]) == 0
            )
            #expect(proxy.tunnels(to: origin.port) == 2, "no_proxy and --no-proxy go directly")
            let bad = try await ChildProcess.run(
                "haul", ["get", origin.url("/x").absoluteString, "--proxy", "ftp://p:1"] + state)
            #expect(bad.status == 64 && bad.error.contains("ftp"), "\(bad.error)")
            await origin.stop()
        }
    }
}
