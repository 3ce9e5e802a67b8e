import ArgumentParser
import HaulEvents
import HaulKit
import Logging

/// What `haul get` and `haul run` share: a manager that runs downloads, Ctrl-C handling, the display and the exit
/// status.
final class ForegroundSession {
    let manager: DownloadManager
    let display: SessionDisplay
    private let interruption: Interruption
    /// The manager's events going to the display, from ``open(_:mode:followsNewDownloads:resumeHint:onShutdown:)``.
    private let observation: EventObservation
    private let mode: SessionDisplay.Mode
    private var ticking: Task<Void, Never>?
    private let resumeHint: String
    /// Runs once the manager has stopped (saving cookies).
    private let onShutdown: () -> Void
    /// Delivers the hooks and webhooks (nil without any); drained when the session finishes.
    private let events: (dispatcher: EventDispatcher, drainTime: Duration)?

    private init(
        manager: DownloadManager, display: SessionDisplay, interruption: Interruption,
        observation: EventObservation, mode: SessionDisplay.Mode, resumeHint: String,
        events: (dispatcher: EventDispatcher, drainTime: Duration)?, onShutdown: @escaping () -> Void
    ) {
        self.onShutdown = onShutdown
        self.events = events
        self.manager = manager
        self.display = display
        self.interruption = interruption
        self.observation = observation
        self.mode = mode
        self.resumeHint = resumeHint
    }

    /// Opens the database, installs the signal handlers and starts collecting events (shown from ``show(_:)`` on).
    static func open(
        _ configuration: DownloadManager.Configuration, mode: SessionDisplay.Mode, followsNewDownloads: Bool,
        resumeHint: String, events settings: EventSettings = EventSettings(),
        eventLogger: Logger = Logger(label: "haul"),
        onShutdown: @escaping () -> Void = {}
    ) async throws -> ForegroundSession {
        // Many small files cost a fifth less CPU with the tasks on the I/O threads (see `TaskPlacement`); every store
        // awaits its I/O, so a shared PostgreSQL queue runs there too.
        if await TaskPlacement.runTasksOnEventLoops() {
            configuration.logger.debug("tasks run on the HTTP client's event loops")
        }
        let manager = try await openManager(configuration)
        let interruption = Interruption(manager: manager)
        interruption.install()
        let display = SessionDisplay(mode: mode, manager: manager, followsNewDownloads: followsNewDownloads)
        let observation = await manager.observeEvents { display.receive($0) }
        let dispatcher = await EventDelivery.start(manager, settings, logger: eventLogger)
        return ForegroundSession(
            manager: manager, display: display, interruption: interruption, observation: observation,
            mode: mode, resumeHint: resumeHint, events: dispatcher.map { ($0, $0.drainTime) },
            onShutdown: onShutdown)
    }

    /// Opens the database with `configuration`; a failure is reported and ends the command (exit 4).
    static func openManager(_ configuration: DownloadManager.Configuration) async throws -> DownloadManager {
        do {
            return try await DownloadManager(configuration: configuration)
        } catch {
            Console.error(error.description)
            throw ExitStatus.fileSystem
        }
    }

    /// Starts showing the downloads `ids` names and the events collected since
    /// ``open(_:mode:followsNewDownloads:resumeHint:)``.
    func show(_ ids: [DownloadID]) async {
        let display = display
        await manager.forEachBatch(ofSnapshots: ids) { display.follow($0) }
        display.goLive()
        if case .terminal = mode {
            ticking = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(100))
                    await display.tick()
                }
            }
        }
    }

    var wasInterrupted: Bool { interruption.happened }

    /// Stops the manager, prints the summary and ends the command with the session's exit status.
    func finish(adding failures: [DownloadError] = []) async throws -> Never {
        await manager.shutdown()
        // The events of this session's last changes are delivered before it ends; what cannot be stays in the
        // outbox for the next haul with the same hooks or webhooks.
        if let events {
            await events.dispatcher.drain(within: events.drainTime)
            await events.dispatcher.stop()
        }
        observation.cancel()
        onShutdown()
        // A tick already under way ends before the summary, which it would otherwise draw over.
        ticking?.cancel()
        await ticking?.value
        let entries = display.entries
        let errors = failures + entries.filter { $0.state == .failed }.compactMap(\.error)
        let status = interruption.happened ? ExitStatus.interrupted : ExitStatus.forFailures(errors)
        display.finish(
            SessionOutcome(exitCode: status.rawValue, interrupted: interruption.happened, resumeHint: resumeHint))
        throw status
    }
}
