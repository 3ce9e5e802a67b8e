import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A host and an optional port as a `Host` header, an origin or `--host` names them: parsed, not compared as text, so
/// that `127.0.0.1.attacker.example` is a name (not an address starting with 127), `[0:0::1]` is `::1`, and
/// `LOCALHOST:6800` is `localhost` on port 6800.
public struct HostAuthority: Sendable, Hashable {
    /// What the host part is.
    public enum Host: Sendable, Hashable {
        /// A DNS name, lowercased (a trailing dot kept: `localhost.` is not `localhost`).
        case name(String)
        /// An IPv4 address, its four bytes.
        case ipv4([UInt8])
        /// An IPv6 address, its sixteen bytes (written in brackets in a `Host` header).
        case ipv6([UInt8])
    }

    public let host: Host
    /// The port, when one is written.
    public let port: Int?

    public init(host: Host, port: Int?) {
        self.host = host
        self.port = port
    }

    /// Parses `host[:port]` or `[v6][:port]`; nil for anything else (user information, paths, spaces, several
    /// values, a zone, an empty or over-long port).
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 300,
            bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !Self.forbidden.contains($0) })
        else { return nil }
        var hostText: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostText = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
            guard let address = Self.address(String(hostText), family: AF_INET6) else { return nil }
            self.host = .ipv6(address)
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return nil }
            hostText = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            if let address = Self.address(String(hostText), family: AF_INET) {
                self.host = .ipv4(address)
            } else {
                guard Self.isName(hostText) else { return nil }
                self.host = .name(hostText.lowercased())
            }
        }
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy(\.isASCIIDigit), let port = Int(portText),
                port <= 65535
            else { return nil }
            self.port = port
        } else {
            self.port = nil
        }
    }

    /// Whether the host is this machine by its address (127.0.0.0/8, `::1`, `::ffff:127.x.x.x`) or the name
    /// `localhost`; any other name is not, whatever it starts with.
    public var isLoopback: Bool {
        switch host {
        case .name(let name): name == "localhost"
        case .ipv4(let bytes): bytes[0] == 127
        case .ipv6(let bytes):
            bytes == Array(repeating: 0, count: 15) + [1]
                || (bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] && bytes[12] == 127)
        }
    }

    /// Whether the host is an IP address rather than a name (a name is what DNS rebinding points elsewhere).
    public var isAddress: Bool {
        if case .name = host { false } else { true }
    }

    /// Whether `--host` (an address or a name, IPv6 with or without brackets, no port) is reachable only from this
    /// machine.
    public static func isLoopback(_ listening: String) -> Bool {
        let text = listening.contains(":") && !listening.hasPrefix("[") ? "[\(listening)]" : listening
        return HostAuthority(parsing: text).map { $0.port == nil && $0.isLoopback } ?? false
    }

    /// Bytes never part of a host and port: `@` (user information), `/ ? #` (a path), `,` (several values), `%` (a
    /// zone or an escape), `\`.
    private static let forbidden: Set<UInt8> = Set("@/?#,%\\\"'<>`{}|^".utf8)

    /// A DNS name: labels of letters, digits, `-` and `_`, separated by single dots (one trailing dot allowed).
    private static func isName(_ text: Substring) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        for (index, label) in labels.enumerated() {
            if label.isEmpty {
                // Only the last one, after a trailing dot.
                guard index == labels.count - 1, index > 0 else { return false }
                continue
            }
            guard label.utf8.count <= 63,
                label.unicodeScalars.allSatisfy({
                    $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_")
                })
            else { return false }
        }
        return true
    }

    /// The bytes of an IPv4 or IPv6 address in its usual text form (`inet_pton`: no `127.1`, no octal).
    private static func address(_ text: String, family: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16)
        guard inet_pton(family, text, &buffer) == 1 else { return nil }
        return Array(buffer.prefix(family == AF_INET ? 4 : 16))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
