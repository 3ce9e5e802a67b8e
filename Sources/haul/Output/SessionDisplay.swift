import HaulKit

/// Follows a foreground session's downloads: feeds the manager's events into a ``TransferTable`` and hands every
/// change to the chosen ``SessionOutput``.
actor SessionDisplay {
    /// How the session is shown.
    enum Mode: Sendable {
        /// A few lines per download; with `quiet`, errors only.
        case plain(quiet: Bool)
        /// Live bars redrawn in place.
        case terminal
        /// NDJSON on standard output.
        case json
    }

    private var table = TransferTable()
    private let output: any SessionOutput
    private let manager: DownloadManager
    /// Follow downloads that appear during the session (`haul run`), not only the ones named at the start.
    private let followsNewDownloads: Bool

    init(mode: Mode, manager: DownloadManager, followsNewDownloads: Bool) {
        switch mode {
        case .plain(let quiet): output = PlainOutput(quiet: quiet)
        case .terminal: output = TerminalOutput()
        case .json: output = JSONOutput()
        }
        self.manager = manager
        self.followsNewDownloads = followsNewDownloads
    }

    var entries: [TransferEntry] { table.all }

    /// Starts following these downloads; ones already complete are reported as such at once.
    func follow(_ snapshots: [DownloadSnapshot]) {
        for snapshot in snapshots where table[snapshot.id] == nil {
            table.insert(snapshot)
            if snapshot.state == .completed, let file = snapshot.file, let entry = table[snapshot.id] {
                output.changed(entry, by: .status(.completed(file: file)), in: table)
            }
        }
    }

    /// Applies events until the stream ends (the manager shut down).
    func consume(_ events: AsyncStream<DownloadEvent>) async {
        for await event in events {
            if table[event.id] == nil {
                guard followsNewDownloads, case .added = event.change else { continue }
            }
            guard let entry = table.apply(event) else { continue }
            output.changed(entry, by: event.change, in: table)
        }
    }

    /// Redraws live output; also learns the file names chosen since the last tick.
    func tick() async {
        for entry in table.running where entry.file == nil {
            table.update(file: await manager.snapshot(entry.id)?.file, for: entry.id)
        }
        output.tick(table)
    }

    func finish(_ outcome: SessionOutcome) {
        output.finish(table, outcome: outcome)
    }
}
