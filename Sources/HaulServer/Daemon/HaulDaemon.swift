import Foundation
import HaulKit
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// `haul serve`: a ``DownloadManager`` behind aria2's JSON-RPC, over HTTP (`POST` and `GET /jsonrpc`) and a
/// WebSocket at `/jsonrpc` that also carries aria2's notifications. What it defends against, and how, is in
/// `docs/security.md`.
public struct HaulDaemon: Sendable {
    public let configuration: Configuration
    public let manager: DownloadManager
    let service: Aria2Service
    let hub: NotificationHub
    let policy: OriginPolicy
    /// Whom requests may come from and be addressed to (every route, and the WebSocket upgrade).
    let gate: RequestGate
    /// The port requests reach the daemon on, once it listens.
    let port: ListeningPort
    /// Failed authentications across every connection.
    let failures: FailureLimiter
    /// Connections open now, against ``ConnectionLimits/connections``.
    let connections: ConnectionCounter
    let logger: Logger
    /// Who may read `/metrics` (`Monitoring/`).
    public let monitoring: Monitoring
    /// What `/metrics` serves.
    public let metrics = DaemonMetrics()
    /// The speed-limit and pause schedules (`--limit-rate-schedule`, `--pause-schedule`).
    public let schedule: ScheduleRunner
    private let shutdownTrigger = ShutdownTrigger()

    /// Refuses a configuration that would expose the daemon (a non-loopback host needs a secret the user chose) or
    /// that names an allowed host it cannot read. Confines the manager's download directory
    /// (``ConfinedDirectories``): no symbolic link below it is followed from now on.
    public init(
        configuration: Configuration, manager: DownloadManager, secretWasGiven: Bool = true,
        monitoring: Monitoring = Monitoring(), schedule: ScheduleRunner = ScheduleRunner(),
        logger: Logger = Logger(label: "haul.serve")
    ) throws(DownloadError) {
        self.schedule = schedule
        if let token = monitoring.metricsToken, token.isEmpty {
            throw .invalidRequest("the metrics token must not be empty")
        }
        self.monitoring = monitoring
        if !Configuration.isLoopback(configuration.host), !secretWasGiven {
            throw .invalidRequest(
                "listening on \(configuration.host) reaches other machines: give --secret or --secret-file too")
        }
        guard !configuration.secret.isEmpty else { throw .invalidRequest("the RPC secret must not be empty") }
        var allowedHosts: [HostAuthority] = []
        for name in configuration.allowedHosts {
            guard let host = HostAuthority(parsing: name) else {
                throw .invalidRequest("--allow-host takes a host name or address with an optional port, got '\(name)'")
            }
            allowedHosts.append(host)
        }
        ConfinedDirectories.confine(manager.configuration.downloadDirectory)
        self.configuration = configuration
        self.manager = manager
        self.logger = logger
        let trigger = shutdownTrigger
        service = Aria2Service(
            manager: manager, downloadDirectory: manager.configuration.downloadDirectory,
            requestShutdown: { trigger.fire() }, schedule: schedule.isEmpty ? nil : schedule)
        hub = NotificationHub(logger: logger)
        policy = OriginPolicy(allowed: configuration.allowedOrigins)
        port = ListeningPort(configured: configuration.port)
        gate = RequestGate(
            hosts: HostPolicy(listening: configuration.host, port: port, allowed: allowedHosts), origins: policy)
        failures = FailureLimiter(
            capacity: configuration.failedAuthenticationBurst, interval: configuration.failedAuthenticationInterval,
            logger: logger)
        connections = ConnectionCounter(
            limit: configuration.connectionLimits.effectiveConnections(
                fileLimit: ConnectionLimits.processFileLimit))
    }

    /// Runs until SIGTERM or SIGINT (or an RPC `shutdown`), then checkpoints every download and returns.
    /// `onListening` is called with the port once the server accepts connections.
    ///
    /// Throws ``ListenError`` when it cannot listen on its address (in use, not allowed, not this machine's), other
    /// errors as they come.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let listening = ListeningFlag()
        let application = makeApplication { port in
            listening.value.store(true, ordering: .releasing)
            await onListening(port)
        }
        let group = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        shutdownTrigger.set { Task { await group.triggerGracefulShutdown() } }
        do {
            try await group.run()
        } catch let error as IOError where !listening.value.load(ordering: .acquiring) {
            // Nothing listened: the socket could not be bound.
            throw ListenError(host: configuration.host, port: configuration.port, errno: error.errnoCode)
        }
        await manager.shutdown()
    }

    /// The daemon could not listen on its address: nothing was served.
    public struct ListenError: Error, Sendable, CustomStringConvertible {
        public var host: String
        public var port: Int
        /// What the system said: `EADDRINUSE` (another program listens there), `EACCES` (a port below 1024 without
        /// the privilege), `EADDRNOTAVAIL` (an address of another machine)…
        public var errno: Int32

        public init(host: String, port: Int, errno: Int32) {
            self.host = host
            self.port = port
            self.errno = errno
        }

        /// `host:port`, an IPv6 address in brackets.
        public var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

        public var description: String { "cannot listen on \(address): \(String(cString: strerror(errno)))" }
    }

    /// The application, for `run()` and for in-process tests.
    public func makeApplication(
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    )
        -> some ApplicationProtocol
    {
        let router = Router()
        router.add(middleware: GateMiddleware(gate: gate))
        let handler = RequestHandler(daemon: self)
        router.post("/jsonrpc") { request, _ in try await handler.post(request) }
        router.get("/jsonrpc") { request, _ in try await handler.get(request) }
        router.on("/jsonrpc", method: .options) { request, _ in handler.preflight(request) }
        router.get("/") { _, _ in Dashboard.response(DashboardPage.html, type: "text/html; charset=utf-8") }
        router.get("/dashboard.js") { _, _ in
            Dashboard.response(DashboardScript.javascript, type: "text/javascript; charset=utf-8")
        }
        router.get("/dashboard.css") { _, _ in Dashboard.response(DashboardStyle.css, type: "text/css; charset=utf-8") }
        let health = HealthEndpoints(daemon: self)
        router.get("/metrics") { request, _ in await health.metrics(request) }
        router.get("/healthz") { _, _ in health.alive() }
        router.get("/readyz") { _, _ in await health.ready() }
        let port = port
        var services: [any Service] = [
            NotificationRelay(hub: hub, manager: manager, activity: service.activity),
            MetricsRelay(metrics: metrics, manager: manager),
        ]
        if !schedule.isEmpty { services.append(ScheduleService(runner: schedule, manager: manager)) }
        return Application(
            router: router,
            server: serverBuilder(),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "Haul/\(HaulVersion.current)"),
            services: services,
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                port.listening(on: bound)
                await onListening(bound)
            },
            logger: logger)
    }

    /// HTTP/1 with the WebSocket upgrade at `/jsonrpc`, behind a ``ConnectionGuard``: frames and messages as large as
    /// a request body may be, the parser's limits and the idle timeout from ``ConnectionLimits``.
    private func serverBuilder() -> HTTPServerBuilder {
        let daemon = self
        let limits = configuration.connectionLimits
        let http1 = HTTP1Channel.Configuration(
            idleTimeout: ConnectionGuard.timeAmount(limits.idleTimeout),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: limits.requestLineBytes, maxHeaderListSize: limits.headBytes,
                maxHeaderFieldCount: 100))
        let channel = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: http1, ws: .init(maxFrameSize: configuration.maxRequestBytes))
        let upgrade:
            @Sendable (HTTPRequest, any Channel, Logger) throws -> ShouldUpgradeResult<
                WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
            > = { head, _, _ in
                guard head.path?.split(separator: "?").first == "/jsonrpc",
                    daemon.gate.refusal(head, isRPC: true) == nil
                else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    try await WebSocketSession(daemon: daemon).run(inbound: inbound, outbound: outbound)
                }
            }
        let connections = connections
        return HTTPServerBuilder { responder in
            GuardedChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, configuration: channel, shouldUpgrade: upgrade),
                limits: limits, counter: connections)
        }
    }

    /// The dispatcher every transport answers with; `subscribe` handles `haul.subscribe` (with its parameters) for a
    /// WebSocket session.
    func dispatcher(subscribe: (@Sendable ([JSONValue]) async -> Void)? = nil) -> RPCDispatcher {
        let service = service
        let metrics = metrics
        return RPCDispatcher(secret: configuration.secret, limits: configuration.rpcLimits, failures: failures) {
            method, params throws(RPCError) in
            if method == "haul.subscribe", let subscribe {
                await subscribe(params)
                return "OK"
            }
            let clock = ContinuousClock()
            let start = clock.now
            defer { metrics.recordCall(method, duration: start.duration(to: clock.now)) }
            return try await service.call(method, params)
        }
    }
}

/// Turns the manager's events into WebSocket notifications, and into the dashboard's ``ActivityLog``, for as long as
/// the application runs.
struct NotificationRelay: Service {
    let hub: NotificationHub
    let manager: DownloadManager
    let activity: ActivityLog

    func run() async throws {
        let activity = activity
        let observation = await manager.observeEvents { activity.record($0) }
        defer { observation.cancel() }
        let events = await manager.events()
        await cancelWhenGracefulShutdown {
            await hub.relay(events)
        }
    }
}

/// Whether the daemon's server listens yet (set from its start-up callback).
private final class ListeningFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// Fires the daemon's graceful shutdown from an RPC call, once the group that runs it exists.
final class ShutdownTrigger: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)
    private let fired = Mutex(false)

    func set(_ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
        if fired.withLock({ $0 }) { action() }
    }

    func fire() {
        fired.withLock { $0 = true }
        action.withLock { $0 }?()
    }
}
