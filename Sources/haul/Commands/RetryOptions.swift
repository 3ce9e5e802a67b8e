import ArgumentParser
import HaulKit

/// How fast a foreground session may go and how long it keeps trying: shared by `haul get` and `haul run` (under
/// "Speed and retries").
struct RetryOptions: ParsableArguments {
    @Option(
        name: .customLong("limit-rate"),
        help: ArgumentHelp("Total speed limit, e.g. 500K, 2M, 1G (bytes per second).", valueName: "RATE"))
    var limitRate: String?

    @Option(help: ArgumentHelp("Attempts in a row without progress before a download fails (1-1000).", valueName: "N"))
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

    @Flag(
        name: .customLong("retry-connrefused"),
        help: """
            get: keep trying a host that refuses connections or whose name does not resolve (a server still             starting), as one that is down; without it, get fails after 3 quick tries to a host that never answered.
            """)
    var retryConnectionRefused = false

    @Option(
        name: .customLong("lowest-speed"),
        help: ArgumentHelp(
            "A connection slower than RATE over --lowest-speed-time is dropped and resumed (0: never).",
            valueName: "RATE"))
    var lowestSpeed: String = "1K"

    @Option(
        name: .customLong("lowest-speed-time"),
        help: ArgumentHelp("The window over which --lowest-speed is measured.", valueName: "SECONDS"))
    var lowestSpeedTime: Double = 30

    func validate() throws {
        if !(1...1000).contains(retries) {
            throw ValidationError("--retries must be at least 1 and at most 1000, got \(retries)")
        }
        try TransferOptions.checkSeconds(timeout, "--timeout", minimum: 0.1)
        if let retryMaxTime { try TransferOptions.checkSeconds(retryMaxTime, "--retry-max-time", minimum: 1) }
        try TransferOptions.checkSeconds(lowestSpeedTime, "--lowest-speed-time", minimum: 1)
        if lowestSpeed != "0", ByteFormat.parse(lowestSpeed) == nil {
            throw ValidationError("--lowest-speed '\(lowestSpeed)' is not a rate like 1K or 100K (or 0 for never)")
        }
        if let limitRate, ByteFormat.parse(limitRate) == nil {
            throw ValidationError("--limit-rate '\(limitRate)' is not a rate like 500K, 2M or 1G")
        }
    }

    /// Puts the limits in `configuration`; `retryMaxTime` is the command's default for `--retry-max-time`.
    func apply(to configuration: inout DownloadManager.Configuration, retryMaxTime defaultRetryMaxTime: Double) {
        configuration.retry.maxAttempts = retries
        configuration.retry.maxTimeWithoutProgress = .milliseconds(Int64((retryMaxTime ?? defaultRetryMaxTime) * 1000))
        configuration.stallTimeout = .milliseconds(Int64(timeout * 1000))
        configuration.lowestSpeed = lowestSpeed == "0" ? nil : ByteFormat.parse(lowestSpeed)
        configuration.lowSpeedWindow = .milliseconds(Int64(lowestSpeedTime * 1000))
        configuration.globalSpeedLimit = limitRate.flatMap(ByteFormat.parse)
    }
}
