import HaulTestSupport
import Testing

/// Waiting for a `haul serve` child process to say where it listens.
enum ServeStartup {
    /// The line naming the RPC endpoint (`rpc: http://127.0.0.1:PORT/jsonrpc`), once the daemon has printed it and
    /// every line starting with one of `also` (such as `dashboard:`); waits at most 30 s, and records why it gave up
    /// (the daemon's standard error) before throwing.
    static func endpointLine(of child: ChildProcess, also prefixes: [String] = []) async throws -> Substring {
        let start = ContinuousClock.now
        while start.duration(to: .now) < .seconds(30) {
            let lines = child.standardOutput.split(separator: "\n")
            if prefixes.allSatisfy({ prefix in lines.contains { $0.hasPrefix(prefix) } }),
                let line = lines.first(where: { $0.contains("/jsonrpc") })
            {
                return line
            }
            guard child.process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("haul serve did not start: \(child.standardError)")
        throw CancellationError()
    }

    /// The port `child` listens on (see ``endpointLine(of:also:)``).
    static func port(of child: ChildProcess, also prefixes: [String] = []) async throws -> Int {
        let line = try await endpointLine(of: child, also: prefixes)
        guard let port = line.split(separator: ":").last.flatMap({ Int($0.prefix { $0.isNumber }) }) else {
            Issue.record("no port in '\(line)'")
            throw CancellationError()
        }
        return port
    }
}
