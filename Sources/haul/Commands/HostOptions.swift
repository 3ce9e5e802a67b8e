import ArgumentParser
import Foundation
import HaulKit

/// What a process does per server: how many connections and how fast per host, and where a fresh URL comes from when one expires.
/// Shared by the commands that download (`get`, `run`, `serve`).
struct HostOptions: ParsableArguments {
    @Option(
        name: .customLong("limit-rate-host"),
        help: ArgumentHelp(
            "Speed limit for all downloads from HOST together, e.g. mirror.example.org=2M (repeatable).",
            valueName: "HOST=RATE"))
    var limitRateHost: [String] = []

    @Option(
        name: .customLong("host-connections"),
        help: ArgumentHelp(
            "At most N connections to one host, over all downloads (1-1000; with --database, over every worker).",
            valueName: "N"))
    var hostConnections: Int = 32

    @Option(
        name: .customLong("url-command"),
        help: ArgumentHelp(
            "When a URL is refused as expired (401, 403, 410), run CMD for a fresh one (its first line of output; "
                + "$HAUL_URL holds the URL added) and continue from the bytes on disk.", valueName: "CMD"))
    var urlCommand: String?

    func validate() throws {
        if !(1...1000).contains(hostConnections) {
            throw ValidationError("--host-connections must be at least 1 and at most 1000, got \(hostConnections)")
        }
        _ = try hostLimits()
    }

    /// The `HOST=RATE` pairs as bytes per second by host.
    func hostLimits() throws -> [String: Int64] {
        var limits: [String: Int64] = [:]
        for pair in limitRateHost {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty, !parts[0].contains("/"),
                let rate = ByteFormat.parse(String(parts[1])), rate > 0
            else {
                throw ValidationError("--limit-rate-host '\(pair)' is not HOST=RATE, like mirror.example.org=2M")
            }
            limits[parts[0].lowercased()] = rate
        }
        return limits
    }

    /// Puts the limits and the URL command in `configuration`.
    func apply(to configuration: inout DownloadManager.Configuration) throws {
        configuration.maxConnectionsPerHost = hostConnections
        configuration.hostSpeedLimits = try hostLimits()
        configuration.urlProvider = urlCommand.map { URLCommand(command: $0).provider }
    }
}
