import CoreMetrics
import Foundation
import HaulKit
import Prometheus
import Synchronization

/// The daemon's metrics, served at `GET /metrics` in Prometheus's text format (every series is listed in
/// `docs/service.md`).
///
/// Recorded through swift-metrics' API into a Prometheus registry of this daemon's own (several daemons in one test
/// process do not share one), from the manager's events (bytes, retries, restarts, verification failures), the RPC
/// dispatcher (latency per method) and, at each scrape, the manager's counts and a probe of the store. HaulKit emits
/// nothing itself: an app embedding it gets no metrics dependency.
public final class DaemonMetrics: Sendable {
    /// The registry `/metrics` is rendered from.
    public let registry: PrometheusCollectorRegistry
    /// swift-metrics' factory over ``registry`` (`haul serve` also bootstraps the process's `MetricsSystem` with it).
    public let factory: PrometheusMetricsFactory
    /// Hosts that get a `host` label of their own in ``Names/hostBytes``, the first to send bytes; the others count as
    /// `other`, so the label set stays bounded whatever is downloaded.
    public static let labelledHosts = 20

    /// The series names.
    public enum Names {
        public static let downloads = "haul_downloads"
        public static let waitingForSpace = "haul_downloads_waiting_for_space"
        public static let receivedBytes = "haul_received_bytes_total"
        public static let hostBytes = "haul_host_received_bytes_total"
        public static let downloadConnections = "haul_download_connections"
        public static let rpcConnections = "haul_rpc_connections"
        public static let retries = "haul_retries_total"
        public static let restarts = "haul_restarts_total"
        public static let verificationFailures = "haul_verification_failures_total"
        public static let completed = "haul_downloads_completed_total"
        public static let failed = "haul_downloads_failed_total"
        public static let spaceWaits = "haul_space_waits_total"
        public static let rpcDuration = "haul_rpc_duration_seconds"
        public static let storeDuration = "haul_store_duration_seconds"
        public static let storeUp = "haul_store_up"
        public static let speedLimit = "haul_speed_limit_bytes_per_second"
        public static let freeBytes = "haul_free_bytes"
    }

    private struct Tracking {
        /// Each download's bytes on disk as last reported: a progress event counts what it adds.
        var received: [DownloadID: Int64] = [:]
        /// Each download's host label.
        var hosts: [DownloadID: String] = [:]
        /// The hosts with a label of their own.
        var labelled: Set<String> = []
    }

    private let tracking = Mutex(Tracking())

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        let fast: [Duration] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
        ]
        factory.durationHistogramBuckets = [Names.rpcDuration: fast, Names.storeDuration: fast]
        self.factory = factory
        // Present from the first scrape, at 0.
        for name in [Names.receivedBytes, Names.verificationFailures, Names.completed, Names.spaceWaits] {
            counter(name).increment(by: 0)
        }
    }

    private func counter(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Counter {
        CoreMetrics.Counter(label: name, dimensions: dimensions, factory: factory)
    }

    private func gauge(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Gauge {
        CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory)
    }

    /// Starts tracking downloads the manager knew before the daemon listened: their bytes on disk are not new.
    public func seed(_ snapshots: [DownloadSnapshot]) {
        tracking.withLock { tracking in
            for snapshot in snapshots {
                tracking.received[snapshot.id] = snapshot.receivedBytes
                tracking.hosts[snapshot.id] = Self.host(of: snapshot.url)
            }
        }
    }

    static func host(of url: URL) -> String { url.host?.lowercased() ?? "" }

    /// Counts what `event` says. Called on the manager's event delivery: short, no waiting.
    public func record(_ event: DownloadEvent) {
        let id = event.id
        switch event.change {
        case .added(let snapshot):
            tracking.withLock {
                $0.received[id] = snapshot.receivedBytes
                $0.hosts[id] = Self.host(of: snapshot.url)
            }
        case .progress(let progress):
            let (added, host) = tracking.withLock { tracking -> (Int64, String) in
                let last = tracking.received[id] ?? 0
                tracking.received[id] = progress.receivedBytes
                let host = tracking.hosts[id] ?? ""
                guard !host.isEmpty else { return (max(0, progress.receivedBytes - last), "other") }
                if !tracking.labelled.contains(host), tracking.labelled.count < Self.labelledHosts {
                    tracking.labelled.insert(host)
                }
                return (max(0, progress.receivedBytes - last), tracking.labelled.contains(host) ? host : "other")
            }
            guard added > 0 else { return }
            counter(Names.receivedBytes).increment(by: added)
            counter(Names.hostBytes, [("host", host)]).increment(by: added)
        case .restarted(let reason):
            // Its bytes were discarded: what comes next is received anew.
            tracking.withLock { $0.received[id] = 0 }
            counter(Names.restarts, [("reason", reason.rawValue)]).increment()
            if reason == .checksumMismatch { counter(Names.verificationFailures).increment() }
        case .retrying(let error, _, _):
            counter(Names.retries, [("reason", error.code.name)]).increment()
        case .status(.completed):
            counter(Names.completed).increment()
        case .status(.failed(let error)):
            counter(Names.failed, [("reason", error.code.name)]).increment()
            if error.code == .checksumMismatch || error.code == .serverDigestMismatch {
                counter(Names.verificationFailures).increment()
            }
        case .status(.removed):
            tracking.withLock {
                $0.received[id] = nil
                $0.hosts[id] = nil
            }
        case .waitingForSpace(let shortage):
            if shortage != nil { counter(Names.spaceWaits).increment() }
        case .status, .mirrorDropped, .fileChanged, .verified, .connections:
            break
        }
    }

    /// Times one RPC call: `method` is labelled as it is when it is one of the daemon's methods, `other` otherwise.
    public func recordCall(_ method: String, duration: Duration) {
        let label = Aria2Service.methods.contains(method) ? method : "other"
        CoreMetrics.Timer(label: Names.rpcDuration, dimensions: [("method", label)], factory: factory)
            .recordNanoseconds(Self.nanoseconds(duration))
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// Brings the gauges up to date from `manager` and the store (timed as ``Names/storeDuration``), then renders
    /// the registry. `rpcConnections`: the daemon's open connections.
    func exposition(manager: DownloadManager, rpcConnections: Int) async -> String {
        for state in DownloadState.allCases {
            gauge(Names.downloads, [("state", state.rawValue)]).record(await manager.count(in: [state]))
        }
        let running = await manager.snapshots(in: [.running])
        gauge(Names.waitingForSpace).record(running.count(where: \.isWaitingForSpace))
        gauge(Names.downloadConnections).record(running.reduce(0) { $0 + $1.progress.activeConnections })
        gauge(Names.rpcConnections).record(rpcConnections)
        gauge(Names.speedLimit).record(await manager.globalSpeedLimit ?? 0)
        if let reading = FreeSpaceReading.of(manager.configuration.downloadDirectory.path) {
            gauge(Names.freeBytes).record(reading.availableBytes)
        }
        let clock = ContinuousClock()
        let start = clock.now
        let up: Bool
        do {
            try await manager.checkStore()
            up = true
        } catch {
            up = false
        }
        CoreMetrics.Timer(label: Names.storeDuration, dimensions: [("operation", "probe")], factory: factory)
            .recordNanoseconds(Self.nanoseconds(start.duration(to: clock.now)))
        gauge(Names.storeUp).record(up ? 1 : 0)
        return registry.emitToString()
    }
}

extension DaemonMetrics {
    /// Makes ``factory`` the process's swift-metrics backend, so that what libraries emit through swift-metrics is
    /// served at `/metrics` too. Once per process (`haul serve` calls it; tests with several daemons do not).
    public func bootstrapMetricsSystem() {
        MetricsSystem.bootstrap(factory)
    }
}
