import ArgumentParser
import Foundation
import HaulEvents
import HaulKit
import Logging

/// Hooks (aria2's `--on-download-*`) and webhooks: shared by `haul serve`, `haul run` and `haul get`
/// (docs/service.md).
struct EventOptions: ParsableArguments {
    @Option(
        name: .customLong("on-download-start"),
        help: ArgumentHelp(
            "Run COMMAND when a download starts, as aria2 does: with its GID, the number of files and the first "
                + "file's path as arguments, and HAUL_* variables (docs/service.md).", valueName: "COMMAND"))
    var onStart: String?

    @Option(
        name: .customLong("on-download-pause"),
        help: ArgumentHelp("Run COMMAND when a download is paused.", valueName: "COMMAND"))
    var onPause: String?

    @Option(
        name: .customLong("on-download-stop"),
        help: ArgumentHelp(
            "Run COMMAND when a download stops: removed, or completed or failed without a hook of its own.",
            valueName: "COMMAND"))
    var onStop: String?

    @Option(
        name: .customLong("on-download-complete"),
        help: ArgumentHelp("Run COMMAND when a download completes.", valueName: "COMMAND"))
    var onComplete: String?

    @Option(
        name: .customLong("on-download-error"),
        help: ArgumentHelp("Run COMMAND when a download fails.", valueName: "COMMAND"))
    var onError: String?

    @Option(
        name: .customLong("hook-timeout"),
        help: ArgumentHelp("Kill a hook still running after SECONDS.", valueName: "SECONDS"))
    var hookTimeout: Double = 60

    @Option(
        name: .customLong("max-concurrent-hooks"),
        help: ArgumentHelp("Hooks running at once, at most (1-64); others wait.", valueName: "N"))
    var maxConcurrentHooks = 4

    @Option(
        name: .customLong("webhook"),
        help: ArgumentHelp(
            "POST each download event as JSON to URL (repeatable); delivered at least once, in order per download.",
            valueName: "URL"))
    var webhooks: [String] = []

    @Option(
        name: .customLong("webhook-secret"),
        help: ArgumentHelp(
            "Sign each webhook's body: X-Haul-Signature: sha256=HMAC-SHA256 of the body in hex.", valueName: "SECRET"))
    var webhookSecret: String?

    @Option(
        name: .customLong("webhook-secret-file"),
        help: ArgumentHelp("Read the webhook secret from FILE (its first line).", valueName: "FILE"))
    var webhookSecretFile: String?

    @Option(
        name: .customLong("webhook-timeout"),
        help: ArgumentHelp(
            "A webhook not answered in SECONDS failed and is tried again.",
            valueName: "SECONDS"))
    var webhookTimeout: Double = 10

    @Option(
        name: .customLong("webhook-max-delay"),
        help: ArgumentHelp(
            "The longest wait between two tries of a failed webhook.",
            valueName: "SECONDS"))
    var webhookMaxDelay: Double = 300

    @Option(
        name: .customLong("webhook-retry-for"),
        help: ArgumentHelp(
            "How long after an event a failed webhook is still tried, then dropped (a day by default).",
            valueName: "SECONDS"))
    var webhookRetryFor: Double = 86400

    /// The hook options given, by kind.
    var hooks: [OutboxEventKind: String] {
        var hooks: [OutboxEventKind: String] = [:]
        hooks[.start] = onStart
        hooks[.pause] = onPause
        hooks[.stop] = onStop
        hooks[.complete] = onComplete
        hooks[.error] = onError
        return hooks
    }

    func validate() throws {
        for (kind, command) in hooks {
            let option = "--on-download-\(kind.rawValue)"
            if command.isEmpty { throw ValidationError("\(option) must name a command") }
            if command.contains("/") {
                guard FileManager.default.isExecutableFile(atPath: command) else {
                    throw ValidationError("\(option): \(command) is not an executable file")
                }
            } else if Self.search(command) == nil {
                throw ValidationError(
                    "\(option): no command '\(command)' in PATH (hooks run a program, not a shell line: give a "
                        + "script's path)")
            }
        }
        try TransferOptions.checkSeconds(hookTimeout, "--hook-timeout", minimum: 0.1)
        if !(1...64).contains(maxConcurrentHooks) {
            throw ValidationError("--max-concurrent-hooks must be 1 to 64, got \(maxConcurrentHooks)")
        }
        for text in webhooks {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host?.isEmpty == false
            else { throw ValidationError("--webhook takes an http:// or https:// URL, got '\(text)'") }
        }
        if webhookSecret != nil, webhookSecretFile != nil {
            throw ValidationError("give --webhook-secret or --webhook-secret-file, not both")
        }
        if let webhookSecret, webhookSecret.isEmpty { throw ValidationError("--webhook-secret must not be empty") }
        if let webhookSecretFile, (try? Self.readSecret(webhookSecretFile)) == nil {
            throw ValidationError("cannot read a secret from --webhook-secret-file \(webhookSecretFile)")
        }
        if webhookSecret != nil || webhookSecretFile != nil, webhooks.isEmpty {
            throw ValidationError("--webhook-secret signs webhooks: give --webhook URL as well")
        }
        try TransferOptions.checkSeconds(webhookTimeout, "--webhook-timeout", minimum: 0.1)
        try TransferOptions.checkSeconds(webhookMaxDelay, "--webhook-max-delay", minimum: 0.1)
        try TransferOptions.checkSeconds(webhookRetryFor, "--webhook-retry-for", minimum: 1)
    }

    /// The first line of `path`, which must not be empty.
    static func readSecret(_ path: String) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard !line.isEmpty else { throw ValidationError("\(path) is empty") }
        return line
    }

    /// The path of `name` in `PATH`, or nil.
    static func search(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// The settings these options give (checked by ``validate()``).
    var settings: EventSettings {
        var settings = EventSettings()
        settings.hooks = hooks
        settings.webhooks = webhooks.compactMap(URL.init(string:))
        settings.webhookSecret = webhookSecret ?? webhookSecretFile.flatMap { try? Self.readSecret($0) }
        settings.hookTimeout = .milliseconds(Int64(hookTimeout * 1000))
        settings.maxConcurrentHooks = maxConcurrentHooks
        settings.webhookTimeout = .milliseconds(Int64(webhookTimeout * 1000))
        settings.backoff.maxDelay = .milliseconds(Int64(webhookMaxDelay * 1000))
        settings.backoff.horizon = .milliseconds(Int64(webhookRetryFor * 1000))
        settings.backoff.initialDelay = min(settings.backoff.initialDelay, settings.backoff.maxDelay)
        return settings
    }

    /// Keeps an outbox in the store when there are hooks or webhooks.
    func apply(to configuration: inout DownloadManager.Configuration) {
        let settings = settings
        configuration.eventTargets = settings.targets
        configuration.hookOptions = settings.aria2Options
    }
}

/// Starts and ends the delivery of a manager's events.
enum EventDelivery {
    /// A dispatcher delivering `manager`'s outbox, started; nil when the manager keeps none.
    static func start(
        _ manager: DownloadManager, _ settings: EventSettings, logger: Logger
    ) async -> EventDispatcher? {
        guard let outbox = manager.eventOutbox, !settings.isEmpty else { return nil }
        let dispatcher = EventDispatcher(outbox: outbox, settings: settings, logger: logger)
        await dispatcher.start()
        return dispatcher
    }
}
