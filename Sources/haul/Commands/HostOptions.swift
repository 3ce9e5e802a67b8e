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
        name: .customLong("max-requests-per-host"),
        help: ArgumentHelp(
            "At most RATE requests to one host, e.g. 20/s, 600/min, 3000/h (with --database, over every worker).",
            valueName: "RATE"))
    var maxRequestsPerHost: String?

    @Option(
        name: .customLong("wait"),
        help: ArgumentHelp("At least SECONDS between two requests to one host (wget's --wait).", valueName: "SECONDS"))
    var wait: String?

    @Flag(
        name: .customLong("random-wait"),
        help: "Multiply each gap between requests to one host by a random factor from 0.5 to 1.5 (wget's).")
    var randomWait = false

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
        _ = try requestPacing()
    }

    /// `--max-requests-per-host`, `--wait` and `--random-wait` as a pacing; nil when none is given.
    func requestPacing() throws -> RequestPacing? {
        var pacing = RequestPacing(randomWait: randomWait)
        if let maxRequestsPerHost {
            do {
                pacing.maxRequestsPerHost = try RequestRate(parsing: maxRequestsPerHost)
            } catch {
                throw ValidationError("--max-requests-per-host: \(error.summary)")
            }
        }
        if let wait { pacing.wait = try Self.waitDuration(wait, name: "--wait") }
        if randomWait, pacing.isEmpty {
            throw ValidationError("--random-wait randomises the gap of --wait or --max-requests-per-host: give one")
        }
        return pacing.isEmpty ? nil : pacing
    }

    /// A wait in seconds (`0.5`, `2`), at most an hour.
    static func waitDuration(_ text: String, name: String) throws -> Duration {
        guard let seconds = Double(text.trimmingWhitespace()), seconds.isFinite, seconds >= 0, seconds <= 3600 else {
            throw ValidationError("\(name) must be a number of seconds from 0 to 3600, got '\(text)'")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
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
        configuration.requestPacing = try requestPacing()
        configuration.urlProvider = urlCommand.map { URLCommand(command: $0).provider }
    }
}
