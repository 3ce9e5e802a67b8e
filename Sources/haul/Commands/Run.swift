import ArgumentParser
import Foundation
import HaulKit

/// `haul run`: work through the queue until it is empty.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download everything queued (see 'haul add') and exit when the queue is empty.",
        discussion: """
            Downloads that are paused or failed stay as they are ('haul resume' queues them again). Downloads \
            added or resumed from another terminal while this runs are picked up; 'haul pause ID' from another \
            terminal pauses one. Ctrl-C stops cleanly; run 'haul run' again to continue.

            Examples:
              haul add -i urls.txt && haul run -j 8
              haul run --limit-rate 5M --json > progress.ndjson
            """)

    @Option(
        name: [.customShort("d"), .customLong("dir")],
        help: ArgumentHelp(
            "Directory for downloads added without one (default: current); with --database, each worker its own.",
            valueName: "DIR"))
    var directory: String?

    @OptionGroup var transfer: TransferOptions
    @OptionGroup(title: "Schedules") var schedules: ScheduleOptions
    @OptionGroup var state: StateOptions

    func run() async throws {
        var configuration = transfer.configuration(state: state, retryMaxTime: 600, spaceWait: 0)
        if let directory { configuration.downloadDirectory = URL(fileURLWithPath: directory) }
        let session = try await ForegroundSession.open(
            configuration, mode: transfer.mode, followsNewDownloads: true, resumeHint: "run 'haul run' again",
            events: transfer.events.settings, eventLogger: transfer.eventLogger,
            onShutdown: { [transfer] in transfer.login.save(configuration) })
        let manager = session.manager
        let runner = try schedules.runner()
        let scheduling = Task { await runner.run(on: manager) }
        defer { scheduling.cancel() }
        await session.show(await manager.ids(in: [.queued, .running]))
        // Counting is cheap however long the queue (the manager keeps the counts), so the command ends within 10 ms of
        // its last download.
        while !session.wasInterrupted, await manager.count(in: [.queued, .running]) > 0 {
            try? await Task.sleep(for: .milliseconds(10))
        }
        try await session.finish()
    }
}
