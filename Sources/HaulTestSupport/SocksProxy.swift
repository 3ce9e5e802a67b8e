import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private microsocks (a SOCKS5 server) on 127.0.0.1 whose outgoing connections leave from ``outgoingAddress``
/// (127.0.0.2, also loopback on Linux), so an origin can tell a request that came through it from a direct one.
public final class SocksProxy: @unchecked Sendable {
    public let port: Int
    /// Where the proxy's connections to origins come from.
    public let outgoingAddress = SocksProxy.outgoing
    private static let outgoing = "127.0.0.2"
    private let process: Process

    /// microsocks, if installed (`.ci/run` installs it).
    public static var executable: URL? {
        ["/usr/bin/microsocks", "/usr/local/bin/microsocks", "/opt/homebrew/bin/microsocks"]
            .map { URL(fileURLWithPath: $0) }.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    public static func start() async throws -> SocksProxy {
        try await blocking { try SocksProxy() }
    }

    private init() throws {
        guard let executable = Self.executable else { throw SocksProxyUnavailable() }
        let outgoing = Self.outgoing
        guard
            let started = try LocalPorts.launch(
                executable,
                arguments: { port in
                    ["-i", "127.0.0.1", "-p", "\(port)", "-b", outgoing]
                })
        else {
            throw SocksProxyUnavailable(reason: "microsocks did not start")
        }
        (process, port) = started
    }

    public var url: URL { URL(string: "socks5h://127.0.0.1:\(port)")! }

    public func stop() { LocalPorts.forceKill(process) }

    deinit { stop() }
}

/// microsocks is not installed or would not start.
public struct SocksProxyUnavailable: Error, CustomStringConvertible {
    public var reason = "microsocks is not installed (.ci/run installs it)"
    public var description: String { reason }
}
