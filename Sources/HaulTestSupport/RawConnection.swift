import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP connection to a server on 127.0.0.1, for tests that must send what no HTTP client sends: a forged
/// `Host`, half a request, a request line of 256 KB, nothing at all. Blocking calls run on a Dispatch thread.
public final class RawConnection: @unchecked Sendable {
    private let descriptor: Int32

    /// Connects to 127.0.0.1:`port`.
    public init(port: Int) throws {
        descriptor = socket(AF_INET, streamSocketType, 0)
        guard descriptor >= 0 else { throw RawConnectionError(reason: "no socket") }
        var address = LocalPorts.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            throw RawConnectionError(reason: "cannot connect to port \(port)")
        }
        // A server that stops reading without closing makes a send fail after 10 s, never wait for ever.
        var bound = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &bound, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends `text` as UTF-8; false if the connection refused it (closed or reset).
    @discardableResult
    public func send(_ text: String) async throws -> Bool {
        try await send(Array(text.utf8))
    }

    /// Sends `bytes`; false if the connection refused them (closed or reset), or took none for 10 s.
    @discardableResult
    public func send(_ bytes: [UInt8]) async throws -> Bool {
        let descriptor = descriptor
        return try await blocking {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes {
                    #if canImport(Glibc)
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    #else
                    Darwin.send(descriptor, $0.baseAddress, $0.count, 0)
                    #endif
                }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                sent += count
            }
            return true
        }
    }

    /// What came back within `timeout`, and whether the server closed the connection (end of stream or reset)
    /// by then.
    public struct Received: Sendable {
        public var text: String
        public var closed: Bool

        /// The status code of the first response line, if one came.
        public var status: Int? {
            guard text.hasPrefix("HTTP/1.") else { return nil }
            return text.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
    }

    /// Reads until the server closes the connection or `timeout` passes, or (with `untilResponse`) until one whole
    /// response (head and `Content-Length` body) arrived.
    public func receive(timeout: Duration, untilResponse: Bool = false) async throws -> Received {
        let descriptor = descriptor
        let deadline = ContinuousClock.now + timeout
        return try await blocking {
            var data = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                if untilResponse, Self.isComplete(data) { return Received(text: Self.text(data), closed: false) }
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return Received(text: Self.text(data), closed: false) }
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let milliseconds = Int32(
                    left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
                let ready = poll(&poller, 1, max(1, milliseconds))
                if ready < 0, errno == EINTR { continue }
                guard ready > 0 else { continue }
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return Received(text: Self.text(data), closed: true) }
                data += buffer[0..<count]
            }
        }
    }

    private static func text(_ data: [UInt8]) -> String { String(decoding: data, as: UTF8.self) }

    /// Whether `data` holds a response head and as much body as its `Content-Length` says.
    private static func isComplete(_ data: [UInt8]) -> Bool {
        let text = Self.text(data)
        guard let end = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<end.lowerBound].lowercased()
        let length =
            head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        return text[end.upperBound...].utf8.count >= length
    }

    deinit { close(descriptor) }
}

public struct RawConnectionError: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
