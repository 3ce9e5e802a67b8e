import ArgumentParser
import Foundation
import HaulKit
import Logging

/// How a foreground session runs and shows its downloads: shared by `haul get` and `haul run`. Its options are shown
/// in groups (speed and retries, network, TLS, authentication, hosts, fleet, output).
struct TransferOptions: ParsableArguments {
    @Option(
        name: [.customShort("j"), .customLong("jobs")],
        help: ArgumentHelp("Downloads at once (1-1000).", valueName: "N"))
    var jobs: Int = 4

    @OptionGroup(title: "Speed and retries") var pace: RetryOptions
    @OptionGroup(title: "Network options") var network: ProxyOptions
    @OptionGroup(title: "TLS options") var trust: TLSOptions
    @OptionGroup(title: "Authentication options") var login: LoginOptions
    @OptionGroup(title: "Host options") var hosts: HostOptions
    @OptionGroup(title: "Fleet options") var worker: WorkerOptions
    @OptionGroup(title: "Output options") var output: OutputOptions
    @OptionGroup(title: "Free space") var space: SpaceOptions
    @OptionGroup(title: "Hooks and webhooks") var events: EventOptions

    /// `-q`/`--quiet`.
    var quiet: Bool { output.quiet }
    /// `--json`.
    var json: Bool { output.json }
    /// `-v`/`--debug`.
    var log: LogOptions { output.log }
    /// Where hooks' output and failed deliveries are logged: standard error, their output with -v, failures always.
    var eventLogger: Logger { log.logger(label: "haul.events", usual: .warning) }
    /// `--limit-rate`, `--retries`, `--retry-max-time`, `--timeout`: read here as before they were grouped.
    var limitRate: String? { pace.limitRate }
    var retries: Int { pace.retries }
    var retryMaxTime: Double? { pace.retryMaxTime }
    var timeout: Double { pace.timeout }

    /// The largest number of seconds any time option takes: a week.
    static let longestSeconds: Double = 7 * 24 * 3600

    func validate() throws {
        if !(1...1000).contains(jobs) {
            throw ValidationError("-j/--jobs must be at least 1 and at most 1000, got \(jobs)")
        }
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
    func configuration(
        state: StateOptions, retryMaxTime defaultRetryMaxTime: Double, spaceWait: Double
    ) -> DownloadManager.Configuration {
        var configuration = state.configuration(worker: worker)
        configuration.maxConcurrentDownloads = jobs
        pace.apply(to: &configuration, retryMaxTime: defaultRetryMaxTime)
        space.apply(to: &configuration, defaultWait: spaceWait)
        // Checked in validate(): a bad proxy never gets this far.
        try? network.apply(to: &configuration)
        configuration.tls = trust.settings
        try? login.apply(to: &configuration)
        try? hosts.apply(to: &configuration)
        configuration.logger = log.logger(label: "haul")
        events.apply(to: &configuration)
        return configuration
    }

    var mode: SessionDisplay.Mode {
        if json { return .json }
        // Log lines would tear the live bars: with -v, plain lines.
        if quiet || log.level != nil || !Console.isInteractive { return .plain(quiet: quiet) }
        return .terminal
    }
}
