import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private tinyproxy on 127.0.0.1 (its own configuration, port and log), as an HTTP proxy people really use.
/// `CONNECT` is allowed to any port: AsyncHTTPClient tunnels every request through an HTTP proxy, plain `http` too.
public final class TinyProxy: @unchecked Sendable {
    public let port: Int
    public let directory: TemporaryDirectory
    private let process: Process

    /// tinyproxy, if installed.
    public static var executable: URL? {
        ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/opt/homebrew/bin/tinyproxy", "/usr/local/bin/tinyproxy"]
            .map { URL(fileURLWithPath: $0) }.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Starts tinyproxy; with `credentials`, it asks for them (Basic).
    public static func start(credentials: (user: String, password: String)? = nil) async throws -> TinyProxy {
        try await blocking { try TinyProxy(credentials: credentials) }
    }

    private init(credentials: (user: String, password: String)?) throws {
        guard let executable = Self.executable else { throw TinyProxyUnavailable() }
        directory = TemporaryDirectory("haul-tinyproxy")
        let directory = directory
        let started = try LocalPorts.launch(executable) { port in
            var configuration = """
                Port \(port)
                Listen 127.0.0.1
                Timeout 60
                LogFile "\(directory.file("tinyproxy.log").path)"
                LogLevel Info
                MaxClients 64
                Allow 127.0.0.1
                DisableViaHeader Yes

                """
            if let credentials { configuration += "BasicAuth \(credentials.user) \(credentials.password)\n" }
            try configuration.write(to: directory.file("tinyproxy.conf"), atomically: true, encoding: .utf8)
            return ["-d", "-c", directory.file("tinyproxy.conf").path]
        }
        guard let started else {
            let log = (try? String(contentsOf: directory.file("tinyproxy.log"), encoding: .utf8)) ?? ""
            throw TinyProxyUnavailable(reason: "tinyproxy did not start: \(log)")
        }
        (process, port) = started
    }

    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The proxy's log so far (it names every request it forwarded).
    public var log: String { (try? String(contentsOf: directory.file("tinyproxy.log"), encoding: .utf8)) ?? "" }

    /// How many tunnels (`CONNECT`) the proxy opened to `port` on 127.0.0.1.
    public func tunnels(to port: Int) -> Int {
        log.components(separatedBy: "CONNECT 127.0.0.1:\(port) ").count - 1
    }

    /// Stops it at once (tinyproxy waits for open connections on SIGTERM).
    public func stop() { LocalPorts.forceKill(process) }

    deinit { stop() }
}

/// tinyproxy is not installed or would not start.
public struct TinyProxyUnavailable: Error, CustomStringConvertible {
    public var reason = "tinyproxy is not installed (.ci/run installs it)"
    public var description: String { reason }
}
