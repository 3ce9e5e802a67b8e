import ArgumentParser
import Foundation
import HaulKit

/// How a foreground session runs and shows its downloads: shared by `haul get` and `haul run`.
struct TransferOptions: ParsableArguments {
    @Option(name: [.customShort("j"), .customLong("jobs")], help: "Downloads at once.")
    var jobs: Int = 4

    @Option(
        name: .customLong("limit-rate"),
        help: ArgumentHelp("Total speed limit, e.g. 500K, 2M, 1G (bytes per second).", valueName: "RATE"))
    var limitRate: String?

    @Option(help: "Attempts in a row without progress before a download fails.")
    var retries: Int = 10

    @Option(help: ArgumentHelp("Seconds without data before a connection is dropped and resumed.", valueName: "SECONDS"))
    var timeout: Double = 30

    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = false

    @Flag(help: "Print one JSON object per event and a final summary (NDJSON) instead of text.")
    var json = false

    func validate() throws {
        if jobs < 1 { throw ValidationError("-j/--jobs must be at least 1") }
        if retries < 1 { throw ValidationError("--retries must be at least 1") }
        if !(timeout > 0) || !timeout.isFinite { throw ValidationError("--timeout must be a positive number of seconds") }
        if let limitRate, ByteFormat.parse(limitRate) == nil {
            throw ValidationError("--limit-rate '\(limitRate)' is not a rate like 500K, 2M or 1G")
        }
        if quiet, json { throw ValidationError("--quiet and --json cannot be used together") }
    }

    /// A configuration that runs downloads with these settings on `state`'s database.
    func configuration(state: StateOptions) -> DownloadManager.Configuration {
        var configuration = DownloadManager.Configuration(databaseURL: state.databaseURL)
        configuration.maxConcurrentDownloads = jobs
        // Each download asks for its own -x; this only bounds what many downloads from one host add up to.
        configuration.maxConnectionsPerHost = 32
        configuration.retry.maxAttempts = retries
        configuration.stallTimeout = .milliseconds(Int64(timeout * 1000))
        configuration.globalSpeedLimit = limitRate.flatMap(ByteFormat.parse)
        return configuration
    }

    var mode: SessionDisplay.Mode {
        if json { return .json }
        if quiet || !Console.isInteractive { return .plain(quiet: quiet) }
        return .terminal
    }
}
