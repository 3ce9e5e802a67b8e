import HaulKit
import ServiceLifecycle

/// Feeds the manager's events into ``DaemonMetrics`` for as long as the application runs.
struct MetricsRelay: Service {
    let metrics: DaemonMetrics
    let manager: DownloadManager

    func run() async throws {
        let metrics = metrics
        metrics.seed(await manager.snapshots(in: [.queued, .running, .paused, .interrupted, .failed]))
        let observation = await manager.observeEvents { metrics.record($0) }
        defer { observation.cancel() }
        try? await gracefulShutdown()
    }
}
