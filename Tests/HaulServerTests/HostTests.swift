import Foundation
import HTTPTypes
import HaulKit
import HaulTestSupport
import Testing

@testable import HaulServer

/// Issue 45, items 3 and 10: requests must name this machine (DNS rebinding), a page is the daemon's own only on
/// such a name, and addresses are parsed, not matched as text.
@Suite("Host and own origin")
struct HostTests {
    static let loopback = HostPolicy(listening: "127.0.0.1", port: ListeningPort(configured: 6800), allowed: [])

    @Test(
        "on loopback: this machine's names with the daemon's port pass",
        arguments: [
            "127.0.0.1:6800", "[::1]:6800", "localhost:6800", "LOCALHOST:6800", "[0:0:0:0:0:0:0:1]:6800",
            "127.0.0.2:6800", "[::ffff:127.0.0.1]:6800",
        ])
    func ownNames(_ host: String) {
        #expect(Self.loopback.permits(host))
    }

    @Test(
        "on loopback: other names, other ports and malformed hosts are refused",
        arguments: [
            "rebind.attacker.example:6800", "127.0.0.1.attacker.example:6800", "localhost.:6800",
            "localhost.attacker.example:6800", "127.0.0.1:6801", "127.0.0.1", "localhost", "127.1:6800",
            "0x7f.0.0.1:6800", "user@127.0.0.1:6800", "127.0.0.1:6800, evil.example", "127.0.0.1:6800 ", "",
            "[::1%lo]:6800", "[::1]:", "[::1]:6800:1", "::1:6800", "127.0.0.1:99999", "127.0.0.1:6800/",
            "192.168.1.10:6800", "[::2]:6800",
        ])
    func otherNames(_ host: String) {
        #expect(!Self.loopback.permits(host))
    }

    @Test("no Host is refused; port 80 may be left out, as browsers do")
    func missingAndDefault() {
        #expect(!Self.loopback.permits(nil))
        let onEighty = HostPolicy(listening: "127.0.0.1", port: ListeningPort(configured: 80), allowed: [])
        #expect(onEighty.permits("localhost") && onEighty.permits("127.0.0.1:80"))
    }

    @Test("--allow-host: a name on any port, or on its port only; exposed: any address on the daemon's port")
    func allowedAndExposed() throws {
        let allowed = [
            try #require(HostAuthority(parsing: "nas.example")), try #require(HostAuthority(parsing: "box:8443")),
        ]
        let policy = HostPolicy(listening: "0.0.0.0", port: ListeningPort(configured: 6800), allowed: allowed)
        #expect(policy.permits("nas.example") && policy.permits("NAS.example:443") && policy.permits("box:8443"))
        #expect(!policy.permits("box:8444") && !policy.permits("nas.example.attacker.example"))
        #expect(policy.permits("192.168.1.10:6800") && policy.permits("[fe80::1]:6800"))
        #expect(!policy.permits("192.168.1.10:80") && !policy.permits("rebind.attacker.example:6800"))
    }

    @Test(
        "--host is loopback only as an address of this machine or the name localhost",
        arguments: [
            ("127.0.0.1", true), ("127.9.8.7", true), ("::1", true), ("[::1]", true), ("localhost", true),
            ("LocalHost", true), ("127.0.0.1.attacker.example", false), ("127.attacker.example", false),
            ("localhost.attacker.example", false), ("0.0.0.0", false), ("::", false), ("192.168.1.2", false),
            ("127.1", false), ("", false), ("[::1]:6800", false),
        ])
    func loopback(_ host: String, _ expected: Bool) {
        #expect(HaulDaemon.Configuration.isLoopback(host) == expected)
    }

    @Test("the daemon's own origin is its Host's, parsed: same name and port, default ports understood")
    func ownOrigin() {
        let policy = OriginPolicy(allowed: [])
        #expect(policy.permits(origin: "http://127.0.0.1:6800", host: "127.0.0.1:6800"))
        #expect(policy.permits(origin: "http://LOCALHOST:6800/", host: "localhost:6800"))
        #expect(policy.permits(origin: "http://localhost", host: "localhost:80"))
        #expect(!policy.permits(origin: "http://localhost:6801", host: "localhost:6800"))
        #expect(!policy.permits(origin: "null", host: "localhost:6800"))
        #expect(!policy.permits(origin: "http://127.0.0.1:6800.attacker.example", host: "127.0.0.1:6800"))
    }

    /// A raw POST of addUri naming `host`, from a page on `origin`.
    static func addUri(host: String, origin: String, url: URL) -> String {
        let body = rpcCall("aria2.addUri", [[.string(url.absoluteString)], ["pause": "true"]]).jsonText
        return "POST /jsonrpc HTTP/1.1\r\nHost: \(host)\r\nOrigin: \(origin)\r\nContent-Type: text/plain\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test("a rebound page (forged Host, its own origin) is refused over real sockets, HTTP and WebSocket alike")
    func rebinding() async throws {
        let harness = try await DaemonHarness.make()
        let url = harness.origin.serve("/r.bin", size: 1_000)
        let manager = harness.manager
        try await harness.live { port in
            let attacker = "rebind.attacker.example:\(port)"
            let forged = try RawConnection(port: port)
            try await forged.send(Self.addUri(host: attacker, origin: "http://\(attacker)", url: url))
            let refused = try await forged.receive(timeout: .seconds(10), untilResponse: true)
            #expect(refused.status == 421, "\(refused.text)")
            #expect(await manager.ids(in: Set(DownloadState.allCases)).isEmpty, "nothing was added")

            let upgrade = try RawConnection(port: port)
            try await upgrade.send(
                "GET /jsonrpc HTTP/1.1\r\nHost: \(attacker)\r\nOrigin: http://\(attacker)\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n")
            let notUpgraded = try await upgrade.receive(timeout: .seconds(10), untilResponse: true)
            #expect(notUpgraded.status != 101 && notUpgraded.status != nil, "\(notUpgraded.text)")

            let twoHosts = try RawConnection(port: port)
            try await twoHosts.send(
                "GET /jsonrpc?method=system.listMethods HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nHost: \(attacker)\r\n\r\n"
            )
            #expect(try await twoHosts.receive(timeout: .seconds(10), untilResponse: true).status == 421)

            let own = try RawConnection(port: port)
            try await own.send(Self.addUri(host: "127.0.0.1:\(port)", origin: "http://127.0.0.1:\(port)", url: url))
            let accepted = try await own.receive(timeout: .seconds(10), untilResponse: true)
            #expect(accepted.status == 200, "\(accepted.text)")
        }
    }
}
