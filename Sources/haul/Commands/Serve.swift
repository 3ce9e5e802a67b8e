import ArgumentParser
import Foundation
import HaulKit
import HaulServer

/// `haul serve`: a daemon that aria2 clients (aria2p, AriaNg, …) drive over aria2's JSON-RPC.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run as a daemon speaking aria2's JSON-RPC (HTTP and WebSocket at /jsonrpc).",
        discussion: """
            Works through the same queue as 'haul add' and 'haul run' (changes from a terminal appear within a \
            second, and the other way round) until SIGTERM or Ctrl-C, then checkpoints and exits 0.

            Every call needs the secret ('token:SECRET' as the first parameter, as aria2 clients send it). Without \
            --secret or --secret-file, one is made on first start and kept in the state directory (rpc-secret, \
            readable only by you); the start-up lines say where it is, and show it only with --print-secret. Only \
            this machine can connect unless --host says otherwise, and then a secret must be given. Requests must \
            be addressed to 127.0.0.1, [::1] or localhost (or a name given with --allow-host); web pages may call \
            only from the daemon's own origin or one named with --allow-origin. JSONP is off unless --enable-jsonp. \
            See docs/security.md.

            If it cannot listen (the port is in use, or below 1024 without the privilege), it says so in one line \
            and exits 69.

            Examples:
              haul serve -d ~/Downloads
              aria2p -p 6800 -s "$(cat ~/.local/share/haul/rpc-secret)" \\
                  add https://example.com/a.iso
            """)

    @Option(
        help: ArgumentHelp(
            "Address to listen on; another than loopback needs --secret or --secret-file.", valueName: "ADDRESS"))
    var host = "127.0.0.1"

    @Option(help: ArgumentHelp("Port to listen on (aria2's; 0: any free one).", valueName: "PORT"))
    var port = 6800

    @Option(help: ArgumentHelp("The RPC secret clients send as token:SECRET.", valueName: "SECRET"))
    var secret: String?

    @Option(name: .customLong("secret-file"), help: ArgumentHelp("Read the secret from FILE.", valueName: "FILE"))
    var secretFile: String?

    @Option(
        name: [.customShort("d"), .customLong("dir")],
        help: ArgumentHelp("Download directory; RPC 'dir' and 'out' stay inside it.", valueName: "DIR"))
    var directory: String?

    @Option(
        name: [.customShort("j"), .customLong("jobs")],
        help: ArgumentHelp("Downloads at once (1-1000).", valueName: "N"))
    var jobs = 5

    @Option(
        name: .customLong("allow-origin"),
        help: ArgumentHelp("A web origin allowed to call the daemon, e.g. http://localhost:8080.", valueName: "ORIGIN"))
    var allowedOrigins: [String] = []

    @Option(
        name: .customLong("allow-host"),
        help: ArgumentHelp(
            "A host name requests may be addressed to besides 127.0.0.1, [::1] and localhost (any port, or only the "
                + "one given as NAME:PORT), e.g. the name of a reverse proxy.", valueName: "NAME"))
    var allowedHosts: [String] = []

    @Flag(name: .customLong("enable-jsonp"), help: "Answer JSONP (GET /jsonrpc with jsoncallback); off by default.")
    var enableJSONP = false

    @Flag(name: .customLong("print-secret"), help: "Show the secret in the dashboard link printed at start-up.")
    var printSecret = false

    @OptionGroup(title: "Network options") var network: ProxyOptions
    @OptionGroup(title: "TLS options") var trust: TLSOptions
    @OptionGroup(title: "Authentication options") var login: LoginOptions
    @OptionGroup(title: "Host options") var hosts: HostOptions
    @OptionGroup(title: "Fleet options") var worker: WorkerOptions
    @OptionGroup(title: "Output options") var log: LogOptions
    @OptionGroup(title: "Free space") var space: SpaceOptions
    @OptionGroup(title: "Monitoring") var monitoring: MonitoringOptions
    @OptionGroup(title: "Schedules") var schedules: ScheduleOptions
    @OptionGroup(title: "Hooks and webhooks") var events: EventOptions

    @OptionGroup var state: StateOptions

    func validate() throws {
        if secret != nil, secretFile != nil { throw ValidationError("give --secret or --secret-file, not both") }
        if let secret, secret.isEmpty { throw ValidationError("--secret must not be empty") }
        if !(0...65535).contains(port) { throw ValidationError("--port must be 0 to 65535, got \(port)") }
        if !(1...1000).contains(jobs) { throw ValidationError("-j/--jobs must be 1 to 1000, got \(jobs)") }
        if !HaulDaemon.Configuration.isLoopback(host), secret == nil, secretFile == nil {
            throw ValidationError(
                "--host \(host) lets other machines connect: give --secret or --secret-file as well")
        }
        for name in allowedHosts where HostAuthority(parsing: name) == nil {
            throw ValidationError("--allow-host takes a host name or address with an optional port, got '\(name)'")
        }
    }

    func run() async throws {
        let stateDirectory = state.databaseURL.deletingLastPathComponent()
        let chosenSecret: String
        do {
            if let secret {
                chosenSecret = secret
            } else if let secretFile {
                chosenSecret = try SecretFile.read(secretFile)
            } else {
                chosenSecret = try SecretFile.secret(in: stateDirectory)
            }
        } catch {
            Console.error("cannot read the secret: \(error)")
            throw ExitStatus.usage
        }
        var configuration = state.configuration(worker: worker)
        configuration.downloadDirectory = URL(fileURLWithPath: directory ?? FileManager.default.currentDirectoryPath)
        // Before the manager resumes anything: no link below the download directory is followed (docs/security.md).
        ConfinedDirectories.confine(configuration.downloadDirectory)
        configuration.maxConcurrentDownloads = jobs
        configuration.retry.maxTimeWithoutProgress = .seconds(600)
        try network.apply(to: &configuration)
        configuration.tls = trust.settings
        try login.apply(to: &configuration)
        try hosts.apply(to: &configuration)
        space.apply(to: &configuration, defaultWait: 0)
        // A daemon's log: what went wrong and what it did, on standard error; -v and --debug add the requests.
        configuration.logger = log.logger(label: "haul", usual: .info)
        events.apply(to: &configuration)
        let manager: DownloadManager
        do {
            try FileManager.default.createDirectory(
                at: configuration.downloadDirectory, withIntermediateDirectories: true)
            manager = try await DownloadManager(configuration: configuration)
        } catch {
            Console.error("\(error)")
            throw ExitStatus.fileSystem
        }
        // Hooks and webhooks, from the outbox (docs/service.md); their output and failures go to the daemon's log.
        let dispatcher = await EventDelivery.start(
            manager, events.settings, logger: log.logger(label: "haul.events", usual: .info))
        var daemonConfiguration = HaulDaemon.Configuration(secret: chosenSecret)
        daemonConfiguration.host = host
        daemonConfiguration.port = port
        daemonConfiguration.allowedOrigins = allowedOrigins
        daemonConfiguration.allowedHosts = allowedHosts
        daemonConfiguration.enablesJSONP = enableJSONP
        let daemon = try HaulDaemon(
            configuration: daemonConfiguration, manager: manager, secretWasGiven: secret != nil || secretFile != nil,
            monitoring: monitoring.settings, schedule: try schedules.runner(),
            logger: log.logger(label: "haul.serve", usual: .info))
        daemon.metrics.bootstrapMetricsSystem()
        let host = host.contains(":") ? "[\(host)]" : host
        // The secret goes into the link only when asked: standard output often ends in a service's log.
        let secretHint =
            if printSecret {
                "#secret=\(chosenSecret)"
            } else if secret != nil {
                " (enter the secret given with --secret; --print-secret puts it in this link)"
            } else {
                " (enter the secret from \(secretFile ?? stateDirectory.appendingPathComponent(SecretFile.name).path); "
                    + "--print-secret puts it in this link)"
            }
        do {
            try await daemon.run { port in
                Console.out(
                    "haul serve: aria2 JSON-RPC on http://\(host):\(port)/jsonrpc (and ws://\(host):\(port)/jsonrpc)\n")
                Console.out("dashboard: http://\(host):\(port)/\(secretHint)\n")
            }
        } catch let error as HaulDaemon.ListenError {
            Console.error(Self.message(for: error))
            await dispatcher?.stop()
            await manager.shutdown()
            throw ExitStatus.unavailable
        } catch {
            Console.error("haul serve stopped: \(error)")
            await dispatcher?.stop()
            await manager.shutdown()
            login.save(configuration)
            throw ExitStatus.fileSystem
        }
        await dispatcher?.stop()
        login.save(configuration)
    }

    /// The one line for an address the daemon cannot listen on: what happened and what to do.
    static func message(for error: HaulDaemon.ListenError) -> String {
        let reason: String
        switch error.errno {
        case EADDRINUSE:
            reason = "the address is in use (another haul serve or aria2c?): stop it or use --port"
        case EACCES:
            reason =
                "permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE): use --port 1024 or above"
        case EADDRNOTAVAIL:
            reason = "this machine has no such address: check --host"
        default:
            reason = String(cString: strerror(error.errno))
        }
        return "cannot listen on \(error.address): \(reason)"
    }
}
