import Foundation
import HaulKit
import Synchronization

/// Follows a foreground session's downloads: feeds the manager's events into a ``TransferTable`` and hands every
/// change to the chosen ``SessionOutput``.
///
/// Events come from ``DownloadManager/observeEvents(_:)``, on the tasks that produce them, and are applied at once
/// under a lock: a stream would wake a consumer task for each of the five or six events of every download, an
/// eighth of the CPU of many small files.
final class SessionDisplay: Sendable {
    /// How the session is shown.
    enum Mode: Sendable {
        /// A few lines per download; with `quiet`, errors only.
        case plain(quiet: Bool)
        /// Live bars redrawn in place.
        case terminal
        /// NDJSON on standard output.
        case json
    }

    /// Events kept until ``goLive()``; older ones are dropped first (as a stream's buffer does).
    static let earlyEventLimit = 4096

    private struct State {
        var table = TransferTable()
        let output: any SessionOutput
        /// Events that arrived before the followed downloads were known, oldest first; nil once live.
        var early: [DownloadEvent]? = []
    }

    private let state: Mutex<State>
    private let manager: DownloadManager
    /// Follow downloads that appear during the session (`haul run`), not only the ones named at the start.
    private let followsNewDownloads: Bool

    convenience init(mode: Mode, manager: DownloadManager, followsNewDownloads: Bool) {
        let output: any SessionOutput
        switch mode {
        case .plain(let quiet): output = PlainOutput(quiet: quiet)
        case .terminal: output = TerminalOutput()
        case .json: output = JSONOutput()
        }
        self.init(output: output, manager: manager, followsNewDownloads: followsNewDownloads)
    }

    init(output: sending any SessionOutput, manager: DownloadManager, followsNewDownloads: Bool) {
        state = Mutex(State(output: output))
        self.manager = manager
        self.followsNewDownloads = followsNewDownloads
    }

    var entries: [TransferEntry] { state.withLock { $0.table.all } }

    /// Takes one event: kept until ``goLive()`` if the followed downloads are not known yet, else applied.
    ///
    /// A session that follows only the downloads it names (`haul get`) announces each of them itself as it begins to
    /// follow it (``follow(_:)``), so it takes no `added` event, nor, before it is live, the `queued` that comes with
    /// each: the snapshots it follows are newer. Kept, the two events of each download a long list adds would crowd
    /// everything else out of the early events, and only the last two thousand or so would be announced.
    func receive(_ event: DownloadEvent) {
        if !followsNewDownloads, case .added = event.change { return }
        state.withLock { state in
            guard state.early == nil else {
                if !followsNewDownloads, case .status(.queued) = event.change { return }
                state.early!.append(event)
                if state.early!.count >= 2 * Self.earlyEventLimit {
                    state.early!.removeFirst(state.early!.count - Self.earlyEventLimit)
                }
                return
            }
            apply(event, to: &state)
        }
    }

    /// Starts following these downloads; ones already complete are reported as such at once, and ones already
    /// running as started (their start may have come before the session listened). A session that follows only the
    /// downloads it names announces each (`added`, with its state now) before anything else of it.
    func follow(_ snapshots: [DownloadSnapshot]) {
        state.withLock { state in
            for snapshot in snapshots where state.table[snapshot.id] == nil {
                state.table.insert(snapshot)
                guard let entry = state.table[snapshot.id] else { continue }
                if !followsNewDownloads { state.output.changed(entry, by: .added(snapshot), in: state.table) }
                if snapshot.state == .completed, let file = snapshot.file {
                    state.output.changed(entry, by: .status(.completed(file: file)), in: state.table)
                } else if snapshot.state == .running {
                    state.output.changed(entry, by: .status(.running), in: state.table)
                }
            }
        }
    }

    /// The followed downloads are all known (``follow(_:)``): applies the events kept until now, then each as it
    /// arrives.
    func goLive() {
        state.withLock { state in
            let early = (state.early ?? []).suffix(Self.earlyEventLimit)
            state.early = nil
            for event in early { apply(event, to: &state) }
        }
    }

    private func apply(_ event: DownloadEvent, to state: inout State) {
        if case .added = event.change {
            guard followsNewDownloads || state.table.contains(event.id) else { return }
        }
        guard let (entry, previousState) = state.table.apply(event) else { return }
        // The start of a run already shown as running (from its snapshot) is not news.
        if previousState == .running, case .status(.running) = event.change { return }
        state.output.changed(entry, by: event.change, in: state.table)
    }

    /// Redraws live output; also learns the file names chosen since the last tick.
    func tick() async {
        let unnamed = state.withLock { $0.table.running.filter { $0.file == nil }.map(\.id) }
        let snapshots = unnamed.isEmpty ? [] : await manager.snapshots(of: unnamed)
        state.withLock { state in
            for snapshot in snapshots { state.table.update(file: snapshot.file, for: snapshot.id) }
            state.output.tick(state.table)
        }
    }

    func finish(_ outcome: SessionOutcome) {
        state.withLock { $0.output.finish($0.table, outcome: outcome) }
    }
}
