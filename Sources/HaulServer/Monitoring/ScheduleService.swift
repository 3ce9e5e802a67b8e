import HaulKit
import ServiceLifecycle

/// Runs the daemon's schedules (``ScheduleRunner``) for as long as the application runs.
struct ScheduleService: Service {
    let runner: ScheduleRunner
    let manager: DownloadManager

    func run() async throws {
        let runner = runner
        let manager = manager
        await cancelWhenGracefulShutdown {
            await runner.run(on: manager)
        }
    }
}
