import Foundation
import HaulTestSupport
import Testing

@testable import HaulServer

/// Issue 45, item 5: over real sockets, no connection can be held open for nothing, no request head grows without
/// bound, and the connections at once stay below the process's file limit.
@Suite("connection limits")
struct ConnectionLimitTests {
    /// A request for the list of methods, addressed to the daemon on `port`.
    static func listMethods(_ port: Int) -> String {
        "GET /jsonrpc?method=system.listMethods&id=1 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n"
    }

    @Test("a connection that sends nothing is closed at the header timeout")
    func idleFromTheStart() async throws {
        let harness = try await DaemonHarness.make { $0.connectionLimits.headerTimeout = .milliseconds(500) }
        try await harness.live { port in
            let silent = try RawConnection(port: port)
            let received = try await silent.receive(timeout: .seconds(10))
            #expect(received.closed && received.text.isEmpty)
        }
    }

    @Test("half a request head is answered 408 and closed at the header timeout, however slowly it trickles")
    func slowHead() async throws {
        let harness = try await DaemonHarness.make { $0.connectionLimits.headerTimeout = .milliseconds(800) }
        try await harness.live { port in
            let slow = try RawConnection(port: port)
            let start = ContinuousClock.now
            for header in ["GET /jsonrpc HTTP/1.1\r\n", "Host: 127.0.0.1:\(port)\r\n", "X-A: 1\r\n", "X-B: 2\r\n"] {
                try await slow.send(header)
                try await Task.sleep(for: .milliseconds(300))
            }
            let received = try await slow.receive(timeout: .seconds(10))
            #expect(received.status == 408 && received.closed, "\(received.text)")
            // Closed by the header timeout, not at the end of the 10 s wait for an answer. The bound leaves room for a
            // loaded machine (CI once took 7.7 s, the four pieces' 1.2 s of sleeps included).
            #expect(start.duration(to: .now) < .seconds(9.5))
        }
    }

    @Test("a 256 KB request line is answered 414, a 64 KB header 431, and both connections closed")
    func oversizedHeads() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.live { port in
            let longLine = try RawConnection(port: port)
            try await longLine.send("GET /jsonrpc?" + String(repeating: "a", count: 256 << 10) + " HTTP/1.1\r\n\r\n")
            let uri = try await longLine.receive(timeout: .seconds(10))
            #expect(uri.status == 414 && uri.closed, "\(uri.text)")

            let bigHeader = try RawConnection(port: port)
            try await bigHeader.send(
                "GET /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Big: " + String(repeating: "b", count: 64 << 10)
                    + "\r\n\r\n")
            let header = try await bigHeader.receive(timeout: .seconds(10))
            #expect(header.status == 431 && header.closed, "\(header.text)")

            let fine = try RawConnection(port: port)
            try await fine.send(Self.listMethods(port))
            #expect(try await fine.receive(timeout: .seconds(10), untilResponse: true).status == 200)
        }
    }

    @Test("a kept-alive connection idle after its answer is closed at the idle timeout")
    func idleAfterRequest() async throws {
        let harness = try await DaemonHarness.make { $0.connectionLimits.idleTimeout = .milliseconds(500) }
        try await harness.live { port in
            let client = try RawConnection(port: port)
            try await client.send(Self.listMethods(port))
            #expect(try await client.receive(timeout: .seconds(10), untilResponse: true).status == 200)
            let after = try await client.receive(timeout: .seconds(10))
            #expect(after.closed)
        }
    }

    @Test("beyond the connection limit a connection is answered 503 and closed; a freed place is taken again")
    func connectionCap() async throws {
        let harness = try await DaemonHarness.make {
            $0.connectionLimits.connections = 8
            $0.connectionLimits.headerTimeout = .seconds(60)
        }
        try await harness.live { port in
            var held: [RawConnection] = []
            for _ in 0..<8 {
                let connection = try RawConnection(port: port)
                try await connection.send("GET /jsonrpc HTTP/1.1\r\n")
                held.append(connection)
            }
            // The server has seen every one of them before the ninth.
            try await Task.sleep(for: .milliseconds(300))
            let ninth = try RawConnection(port: port)
            let refused = try await ninth.receive(timeout: .seconds(10))
            #expect(refused.status == 503 && refused.closed, "\(refused.text)")
            held.removeFirst()
            try await Task.sleep(for: .milliseconds(300))
            let again = try RawConnection(port: port)
            try await again.send(Self.listMethods(port))
            #expect(try await again.receive(timeout: .seconds(10), untilResponse: true).status == 200)
        }
    }

    @Test("WebSocket sessions count against the connection limit too")
    func webSocketsCount() async throws {
        let harness = try await DaemonHarness.make { $0.connectionLimits.connections = 8 }
        try await harness.live { port in
            // The test framework's own client may hold one of the eight places.
            var sockets: [RawConnection] = []
            var refused: RawConnection.Received?
            for _ in 0..<9 {
                let socket = try RawConnection(port: port)
                try await socket.send(
                    "GET /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
                        + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        + "Sec-WebSocket-Version: 13\r\n\r\n")
                let answer = try await socket.receive(timeout: .seconds(10), untilResponse: true)
                guard answer.status == 101 else {
                    var rest = try await socket.receive(timeout: .seconds(10))
                    rest.text = answer.text + rest.text
                    refused = rest
                    break
                }
                sockets.append(socket)
            }
            #expect((7...8).contains(sockets.count), "\(sockets.count) sessions open")
            #expect(refused?.status == 503 && refused?.closed == true, "\(refused?.text ?? "none refused")")
        }
    }

    @Test(
        "the connection limit stays below half the file limit",
        arguments: [(1024, 256, 256), (256, 256, 96), (100, 256, 18), (20, 256, 8), (1_000_000, 256, 256)])
    func effectiveLimit(_ files: Int, _ configured: Int, _ expected: Int) {
        var limits = HaulDaemon.ConnectionLimits()
        limits.connections = configured
        #expect(limits.effectiveConnections(fileLimit: files) == expected)
    }
}
