import ArgumentParser
import Foundation
import HaulKit

/// How a foreground session runs and shows its downloads: shared by `haul get` and `haul run`.
struct TransferOptions: ParsableArguments {
    @Option(name: [.customShort("j"), .customLong("jobs")], help: "Downloads at once (1-1000).")
    var jobs: Int = 4

    @Option(
        name: .customLong("limit-rate"),
        help: ArgumentHelp("Total speed limit, e.g. 500K, 2M, 1G (bytes per second).", valueName: "RATE"))
    var limitRate: String?

    @Option(help: "Attempts in a row without progress before a download fails (1-1000).")
    var retries: Int = 10

    @Option(
        name: .customLong("retry-max-time"),
        help: ArgumentHelp(
            "Seconds without a new byte before a download fails (default: 90 for get, 600 for run).",
            valueName: "SECONDS"))
    var retryMaxTime: Double?

    @Option(
        help: ArgumentHelp("Seconds without data before a connection is dropped and resumed.", valueName: "SECONDS"))
    var timeout: Double = 30

    @Option(
        name: .customLong("lowest-speed"),
        help: ArgumentHelp(
            "A connection slower than RATE over --lowest-speed-time is dropped and resumed (default 1K; 0: never).",
            valueName: "RATE"))
    var lowestSpeed: String = "1K"

    @Option(
        name: .customLong("lowest-speed-time"),
        help: ArgumentHelp("The window over which --lowest-speed is measured (default 30).", valueName: "SECONDS"))
    var lowestSpeedTime: Double = 30

    @OptionGroup var network: ProxyOptions
    @OptionGroup var trust: TLSOptions
    @OptionGroup var login: LoginOptions
    @OptionGroup var hosts: HostOptions
    @OptionGroup var log: LogOptions

    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = false

    @Flag(help: "Print one JSON object per event and a final summary (NDJSON) instead of text.")
    var json = false

    /// The largest number of seconds any time option takes: a week.
    static let longestSeconds: Double = 7 * 24 * 3600

    func validate() throws {
        if !(1...1000).contains(jobs) {
            throw ValidationError("-j/--jobs must be at least 1 and at most 1000, got \(jobs)")
        }
        if !(1...1000).contains(retries) {
            throw ValidationError("--retries must be at least 1 and at most 1000, got \(retries)")
        }
        try Self.checkSeconds(timeout, "--timeout", minimum: 0.1)
        if let retryMaxTime { try Self.checkSeconds(retryMaxTime, "--retry-max-time", minimum: 1) }
        try Self.checkSeconds(lowestSpeedTime, "--lowest-speed-time", minimum: 1)
        if lowestSpeed != "0", ByteFormat.parse(lowestSpeed) == nil {
            throw ValidationError("--lowest-speed '\(lowestSpeed)' is not a rate like 1K or 100K (or 0 for never)")
        }
        if let limitRate, ByteFormat.parse(limitRate) == nil {
            throw ValidationError("--limit-rate '\(limitRate)' is not a rate like 500K, 2M or 1G")
        }
        if quiet, json { throw ValidationError("--quiet and --json cannot be used together") }
        if quiet, log.level != nil { throw ValidationError("--quiet and -v/--debug cannot be used together") }
    }

    /// Checks that `value` is a number of seconds from `minimum` to ``longestSeconds``.
    static func checkSeconds(_ value: Double, _ name: String, minimum: Double) throws {
        guard value.isFinite, value >= minimum, value <= longestSeconds else {
            throw ValidationError(
                "\(name) must be a positive number of seconds, from \(minimum) to \(Int(longestSeconds)) (a week), "
                    + "got \(value)")
        }
    }

    /// A configuration that runs downloads with these settings on `state`'s database; `retryMaxTime` is the
    /// command's default for `--retry-max-time`.
    func configuration(state: StateOptions, retryMaxTime defaultRetryMaxTime: Double) -> DownloadManager.Configuration {
        var configuration = state.configuration()
        configuration.maxConcurrentDownloads = jobs
        configuration.retry.maxAttempts = retries
        configuration.retry.maxTimeWithoutProgress = .milliseconds(Int64((retryMaxTime ?? defaultRetryMaxTime) * 1000))
        configuration.stallTimeout = .milliseconds(Int64(timeout * 1000))
        configuration.lowestSpeed = lowestSpeed == "0" ? nil : ByteFormat.parse(lowestSpeed)
        configuration.lowSpeedWindow = .milliseconds(Int64(lowestSpeedTime * 1000))
        configuration.globalSpeedLimit = limitRate.flatMap(ByteFormat.parse)
        // Checked in validate(): a bad proxy never gets this far.
        try? network.apply(to: &configuration)
        configuration.tls = trust.settings
        try? login.apply(to: &configuration)
        try? hosts.apply(to: &configuration)
        configuration.logger = log.logger(label: "haul")
        return configuration
    }

    var mode: SessionDisplay.Mode {
        if json { return .json }
        // Log lines would tear the live bars: with -v, plain lines.
        if quiet || log.level != nil || !Console.isInteractive { return .plain(quiet: quiet) }
        return .terminal
    }
}
