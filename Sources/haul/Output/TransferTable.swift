import Foundation
import HaulKit

/// One download as the command line shows it.
struct TransferEntry: Sendable {
    let id: DownloadID
    /// The URL as text: a parsed `URL` is ~300 bytes more, for each of a list of 100,000.
    var url: String
    var file: URL?
    var state: DownloadState
    var received: Int64
    var expected: Int64?
    var bytesPerSecond: Double = 0
    /// The speed the time left is estimated from (``DownloadProgress/smoothedBytesPerSecond``).
    var smoothedBytesPerSecond: Double = 0
    var connections = 0
    /// Bytes fetched by this session's earlier runs of it (before a pause, say).
    var fetchedBefore: Int64 = 0
    /// Bytes fetched by its current run (``DownloadProgress/transferredBytes``).
    var fetchedNow: Int64 = 0
    /// Bytes already on disk when this session started the download (from an earlier run).
    var resumedFrom: Int64?
    var startedAt: ContinuousClock.Instant?
    var finishedAt: ContinuousClock.Instant?
    var error: DownloadError?
    /// Why it waits for room on its file system, while it does.
    var waitingForSpace: FreeSpaceShortage?
    /// It was complete before this session began.
    var wasAlreadyComplete = false
    /// What its complete file was verified against.
    var verification: DownloadVerification?
    /// The bytes each source served (its URL, mirrors, one that took over).
    var sources: [DownloadSourceBytes] = []
    /// Removed by another command before it completed: neither finished nor failed, and counted apart (its
    /// ``state`` is the last it had).
    var removed = false

    init(_ snapshot: DownloadSnapshot) {
        id = snapshot.id
        url = snapshot.url.absoluteString
        file = snapshot.file
        state = snapshot.state
        received = snapshot.receivedBytes
        expected = snapshot.totalBytes
        error = snapshot.lastError
        verification = snapshot.verification
    }

    /// The file name if known, else the last part of the URL.
    var name: String {
        if let file { return file.lastPathComponent }
        guard let parsed = URL(string: url) else { return url }
        let last = parsed.lastPathComponent
        return last.isEmpty || last == "/" ? (parsed.host ?? url) : last
    }

    var fraction: Double? {
        if state == .completed { return 1 }
        guard let expected, expected > 0 else { return nil }
        return min(1, Double(received) / Double(expected))
    }

    /// Seconds this session spent on it.
    var seconds: Double? {
        guard let startedAt else { return nil }
        return (finishedAt ?? .now).seconds(since: startedAt)
    }

    /// Bytes fetched by this session: what came over the network, not the bytes an earlier run left on disk.
    var transferred: Int64 { fetchedBefore + fetchedNow }

    /// The bytes this session fetched over the time it spent on them.
    var averageBytesPerSecond: Double? {
        guard let seconds, seconds > 0 else { return nil }
        return Double(transferred) / seconds
    }

    /// The time left at the smoothed speed; nil when nothing moves or the size is unknown.
    var estimatedSecondsLeft: Double? {
        guard let expected, bytesPerSecond > 0, expected >= received else { return nil }
        return Double(expected - received) / (smoothedBytesPerSecond > 0 ? smoothedBytesPerSecond : bytesPerSecond)
    }
}

/// The downloads a session follows, updated from the manager's events.
///
/// Kept for a redraw ten times a second over lists of 100,000: the entries densely in the order first seen, and
/// the counts, the running downloads and the totals kept as entries change, so a redraw visits the running ones only.
struct TransferTable: Sendable {
    /// In the order they were first seen.
    private(set) var all: [TransferEntry] = []
    private var positions: [DownloadID: Int] = [:]
    /// How many are in each state (those removed apart).
    private(set) var counts: [DownloadState: Int] = [:]
    /// How many were removed by another command before they completed (in no state's count).
    private(set) var removedCount = 0
    /// The positions of the running ones.
    private var runningPositions: Set<Int> = []
    /// Bytes received by the downloads that did not fail.
    private(set) var received: Int64 = 0
    private var expectedKnown: Int64 = 0
    /// Downloads that did not fail and whose size is unknown (then so is the total).
    private var unknownSizes = 0

    subscript(id: DownloadID) -> TransferEntry? { positions[id].map { all[$0] } }

    /// The running downloads, in the order first seen.
    var running: [TransferEntry] { runningPositions.sorted().map { all[$0] } }

    /// The size of all that did not fail; nil while one of them has no known size.
    var expected: Int64? { unknownSizes == 0 ? expectedKnown : nil }

    mutating func insert(_ snapshot: DownloadSnapshot) {
        guard positions[snapshot.id] == nil else { return }
        var entry = TransferEntry(snapshot)
        entry.wasAlreadyComplete = snapshot.state == .completed
        if snapshot.state == .running {
            // It started before the session could see it (`haul run` opens a manager that starts its queue at once,
            // and a job's first snapshot may say 0 bytes): its time counts from now, its bytes from what its run
            // fetched so far, never from what is on disk.
            entry.startedAt = .now
            entry.fetchedNow = snapshot.progress.transferredBytes
            entry.resumedFrom = max(0, snapshot.receivedBytes - snapshot.progress.transferredBytes)
        }
        positions[snapshot.id] = all.count
        all.append(entry)
        count(entry, at: all.count - 1, as: 1)
    }

    /// Whether the download is followed.
    func contains(_ id: DownloadID) -> Bool { positions[id] != nil }

    /// Applies one event; returns the entry as it is now and the state it was in before the event (after the
    /// insertion an `added` makes), or nil if the download is not followed.
    mutating func apply(_ event: DownloadEvent) -> (entry: TransferEntry, previousState: DownloadState)? {
        if case .added(let snapshot) = event.change { insert(snapshot) }
        guard let position = positions[event.id] else { return nil }
        // Changed in place: a copy of the whole entry before and after each event was a fifth of the display's cost
        // per small file. Only what the counts need is kept from before.
        let previous = Counted(all[position])
        Self.change(&all[position], by: event.change, at: ContinuousClock.now)
        let entry = all[position]
        recount(from: previous, to: Counted(entry), at: position)
        return (entry, previous.state)
    }

    /// What the counts and totals know of an entry (``recount(from:to:at:)``).
    private struct Counted {
        var state: DownloadState
        var removed: Bool
        var received: Int64
        var expected: Int64?

        init(_ entry: TransferEntry) {
            state = entry.state
            removed = entry.removed
            received = entry.received
            expected = entry.expected
        }
    }

    /// Applies `change` to `entry` (`now`: when the event was taken).
    private static func change(
        _ entry: inout TransferEntry, by change: DownloadEvent.Change, at now: ContinuousClock.Instant
    ) {
        switch change {
        case .added:
            break
        case .status(.running):
            if entry.state != .running {
                // A new run counts its bytes from 0 (one already running was seen in a snapshot first).
                entry.fetchedBefore += entry.fetchedNow
                entry.fetchedNow = 0
            }
            entry.state = .running
            entry.startedAt = entry.startedAt ?? now
            entry.resumedFrom = entry.resumedFrom ?? entry.received
            entry.finishedAt = nil
        case .status(.queued):
            entry.state = .queued
        case .status(.paused):
            entry.state = .paused
            entry.bytesPerSecond = 0
            entry.connections = 0
        case .status(.interrupted):
            entry.state = .interrupted
            entry.bytesPerSecond = 0
            entry.connections = 0
        case .status(.completed(let file)):
            entry.state = .completed
            entry.file = file
            if let expected = entry.expected { entry.received = expected }
            entry.expected = entry.expected ?? entry.received
            entry.finishedAt = now
            entry.bytesPerSecond = 0
            entry.connections = 0
        case .status(.failed(let error)):
            entry.state = .failed
            entry.error = error
            entry.finishedAt = now
            entry.bytesPerSecond = 0
            entry.connections = 0
        case .status(.removed):
            // A completed one stays completed: its file was fetched (and is there unless it was deleted with it).
            if entry.state != .completed {
                entry.removed = true
                entry.finishedAt = now
                entry.bytesPerSecond = 0
                entry.connections = 0
            }
        case .progress(let progress):
            entry.received = progress.receivedBytes
            entry.expected = progress.expectedBytes ?? entry.expected
            entry.bytesPerSecond = progress.bytesPerSecond
            entry.smoothedBytesPerSecond = progress.smoothedBytesPerSecond
            entry.fetchedNow = progress.transferredBytes
            entry.connections = progress.activeConnections
        case .restarted:
            entry.received = 0
            entry.resumedFrom = 0
        case .retrying:
            entry.bytesPerSecond = 0
        case .waitingForSpace(let shortage):
            entry.waitingForSpace = shortage
            entry.bytesPerSecond = 0
        case .mirrorDropped, .connections:
            break
        case .verified(let verification, let sources):
            entry.verification = verification
            entry.sources = sources
        case .fileChanged:
            entry.state = .queued
            entry.wasAlreadyComplete = false
        }
    }

    /// Records the path a download got once its name was chosen.
    mutating func update(file: URL?, for id: DownloadID) {
        if let file, let position = positions[id] { all[position].file = file }
    }

    /// Moves the entry at `position` from `old` to `new` in the counts and totals: the counts and the running
    /// positions change only with its state (most events are progress, a few a second for each download).
    private mutating func recount(from old: Counted, to new: Counted, at position: Int) {
        if old.state != new.state || old.removed != new.removed {
            countState(old, at: position, as: -1)
            countState(new, at: position, as: 1)
        }
        countTotals(old, as: -1)
        countTotals(new, as: 1)
    }

    /// Adds `entry` to the counts and totals (`sign` 1), or takes it out (-1).
    private mutating func count(_ entry: TransferEntry, at position: Int, as sign: Int) {
        let counted = Counted(entry)
        countState(counted, at: position, as: sign)
        countTotals(counted, as: sign)
    }

    /// Adds `entry` to the count of its state and, running, to the running positions (`sign` 1), or takes it out (-1).
    private mutating func countState(_ entry: Counted, at position: Int, as sign: Int) {
        guard !entry.removed else {
            removedCount += sign
            return
        }
        counts[entry.state, default: 0] += sign
        if entry.state == .running {
            if sign > 0 { runningPositions.insert(position) } else { runningPositions.remove(position) }
        }
    }

    /// Adds `entry`'s bytes to the totals (`sign` 1), or takes them out (-1).
    private mutating func countTotals(_ entry: Counted, as sign: Int) {
        // Failed and removed downloads count for nothing in the totals.
        guard entry.state != .failed, !entry.removed else { return }
        received += Int64(sign) * entry.received
        if let expected = entry.expected { expectedKnown += Int64(sign) * expected } else { unknownSizes += sign }
    }
}

extension ContinuousClock.Instant {
    func seconds(since start: ContinuousClock.Instant) -> Double {
        let duration = start.duration(to: self)
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
