import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// Which proxy a request takes, as curl decides it: one line per case.
@Suite("Proxy settings")
struct ProxySettingsTests {
    static func url(_ text: String) -> URL { URL(string: text)! }

    @Test(
        "the environment as curl reads it: lower case first, all_proxy for the rest, no_proxy to bypass",
        arguments: [
            (["http_proxy": "http://p:1"], "http://a.example/x", "http://p:1"),
            (["http_proxy": "http://p:1"], "https://a.example/x", nil),
            (["HTTPS_PROXY": "http://q:2"], "https://a.example/x", "http://q:2"),
            (["https_proxy": "http://low:2", "HTTPS_PROXY": "http://up:2"], "https://a.example/x", "http://low:2"),
            (["all_proxy": "http://all:3"], "https://a.example/x", "http://all:3"),
            (["all_proxy": "http://all:3", "http_proxy": "http://p:1"], "http://a.example/x", "http://p:1"),
            (["http_proxy": "p:1"], "http://a.example/x", "http://p:1"),
            (["http_proxy": "http://p:1", "no_proxy": "example.com"], "http://a.example.com/x", nil),
            (["http_proxy": "http://p:1", "no_proxy": ".example.com"], "http://example.com/x", nil),
            (["http_proxy": "http://p:1", "no_proxy": "example.com"], "http://badexample.com/x", "http://p:1"),
            (["http_proxy": "http://p:1", "NO_PROXY": "127.0.0.1, localhost"], "http://127.0.0.1:8/x", nil),
            (["http_proxy": "http://p:1", "no_proxy": "*"], "http://a.example/x", nil),
            (["http_proxy": "http://p:1", "no_proxy": "a.example:8080"], "http://a.example/x", nil),
        ] as [([String: String], String, String?)])
    func environment(_ environment: [String: String], _ target: String, _ expected: String?) throws {
        let settings = try #require(try ProxySettings.fromEnvironment(environment))
        #expect(settings.proxy(for: Self.url(target))?.absoluteString == expected)
    }

    @Test("no proxy in the environment is none at all")
    func none() throws {
        #expect(try ProxySettings.fromEnvironment(["no_proxy": "x", "PATH": "/bin"]) == nil)
    }

    @Test("proxy URLs are checked: http and socks5 only, no credentials for SOCKS; passwords are masked")
    func validation() throws {
        #expect(throws: DownloadError.self) { try ProxySettings(all: Self.url("https://p:1")) }
        #expect(throws: DownloadError.self) { try ProxySettings(all: Self.url("socks5://u:v@p:1")) }
        #expect(throws: DownloadError.self) { try ProxySettings(all: Self.url("ftp://p:1")) }
        let endpoint = try ProxySettings.endpoint(Self.url("http://user:p%40ss@proxy.lan"))
        #expect(endpoint == .init(kind: .http, host: "proxy.lan", port: 1080, username: "user", password: "p@ss"))
        #expect(try ProxySettings.endpoint(Self.url("socks5h://s:9")).kind == .socks5)
        let settings = try ProxySettings(all: Self.url("http://user:secret@proxy.lan:3128"))
        #expect(!settings.description.contains("secret") && settings.description.contains("***"))
    }
}

/// Downloads through a real tinyproxy on 127.0.0.1.
@Suite(
    "Through a proxy", .serialized,
    .enabled(if: TinyProxy.executable != nil, "tinyproxy is not installed (.ci/run installs it)"))
struct ProxyTests {
    @Test("a download goes through the proxy (a CONNECT tunnel); a host in no_proxy goes directly")
    func throughTheProxy() async throws {
        let proxy = try await TinyProxy.start()
        defer { proxy.stop() }
        let harness = try await Harness.make { $0.proxy = try? ProxySettings(all: proxy.url) }
        let url = harness.origin.serve("/proxied.bin", size: 300_000)
        let id = try await harness.manager.add(url)
        let manager = harness.manager
        let file = try await withDeadline(.seconds(60), "the proxied download") { try await manager.wait(for: id) }
        expectContent(file, size: 300_000)
        let port = harness.origin.port
        let tunnels = proxy.tunnels(to: port)
        #expect(tunnels >= 1, "the request went through the proxy: \(proxy.log)")
        await harness.manager.shutdown()

        let direct = try await Harness.make(origin: harness.origin) {
            $0.proxy = try? ProxySettings(all: proxy.url, bypass: ["127.0.0.1"])
        }
        let bypassing = direct.origin.serve("/direct.bin", size: 10_000)
        let second = try await direct.manager.add(bypassing)
        let directManager = direct.manager
        expectContent(
            try await withDeadline(.seconds(60), "the direct download") { try await directManager.wait(for: second) },
            size: 10_000)
        #expect(proxy.tunnels(to: port) == tunnels, "a host in no_proxy is reached directly")
        await direct.shutdown()
    }

    @Test("a proxy that asks for credentials gets them from the URL; without them the download fails with 407")
    func credentials() async throws {
        let proxy = try await TinyProxy.start(credentials: ("haul", "s3cret"))
        defer { proxy.stop() }
        let withCredentials = try await Harness.make {
            $0.proxy = try? ProxySettings(all: URL(string: "http://haul:s3cret@127.0.0.1:\(proxy.port)")!)
        }
        let url = withCredentials.origin.serve("/auth.bin", size: 20_000)
        let id = try await withCredentials.manager.add(url)
        let authorized = withCredentials.manager
        expectContent(
            try await withDeadline(.seconds(60), "the authorized download") { try await authorized.wait(for: id) },
            size: 20_000)
        await withCredentials.manager.shutdown()

        let without = try await Harness.make(origin: withCredentials.origin) {
            $0.proxy = try? ProxySettings(all: proxy.url)
        }
        let refused = try await without.manager.add(withCredentials.origin.serve("/refused.bin", size: 1_000))
        let unauthorized = without.manager
        await #expect(throws: DownloadError.self) {
            try await withDeadline(.seconds(60), "the refused download") { try await unauthorized.wait(for: refused) }
        }
        #expect(await without.manager.snapshot(refused)?.lastError?.httpStatus == 407)
        await without.shutdown()
    }
}
