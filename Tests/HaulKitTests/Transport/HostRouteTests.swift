import Foundation
import Testing

@testable import HaulKit

/// Which requests share a host's fate: those that connect to the same place.
@Suite("Host routes")
struct HostRouteTests {
    @Test(
        "a request's route is its host and port, or the proxy it goes through",
        arguments: [
            ("http://Example.COM/a", nil, "example.com:80"),
            ("https://example.com/a", nil, "example.com:443"),
            ("http://example.com:8080/a", nil, "example.com:8080"),
            ("http://[::1]:8080/a", nil, "[::1]:8080"),
            ("http://example.com/a", "http://proxy.lan:3128", "the proxy proxy.lan:3128"),
            ("https://example.com/a", "socks5://proxy.lan", "the proxy proxy.lan:1080"),
            ("http://internal.lan/a", "http://proxy.lan:3128", "internal.lan:80"),
        ] as [(String, String?, String)])
    func routes(_ url: String, _ proxy: String?, _ route: String) throws {
        let settings = try proxy.map { try ProxySettings(all: URL(string: $0)!, bypass: ["internal.lan"]) }
        let transport = try HTTPTransport.shared(
            connectTimeout: .seconds(10), stallTimeout: .seconds(30), maxConnectionsPerHost: 4, proxy: settings)
        #expect(transport.route(for: URL(string: url)!) == route)
    }
}
