import Foundation
import HaulKit
import Synchronization

/// What the dashboard shows that no snapshot keeps: each download's recent history (state changes, retries, dropped
/// mirrors, restarts) and speeds over the last minutes, the total's and each download's. Fed with every event of the
/// manager (``record(_:)``, from ``DownloadManager/observeEvents(_:)``: on the task that produced the event, so it only
/// takes a lock); read by `haul.page` and `haul.details`. Bounded: ``entriesPerDownload`` entries for at most
/// ``downloadsKept`` downloads, ``seconds`` of speeds.
final class ActivityLog: Sendable {
    /// One line of a download's history.
    struct Entry: Sendable, Equatable {
        var at: Date
        var text: String
    }

    static let entriesPerDownload = 30
    static let downloadsKept = 2_000
    /// Speeds are kept for this many seconds, one sample a second.
    static let seconds = 300

    private struct Speeds {
        /// Per second (the clock's whole seconds), the total.
        var total: [Int64: Int64] = [:]
        /// The last speed each running download reported, and when.
        var latest: [DownloadID: (bytesPerSecond: Int64, second: Int64)] = [:]
        /// Per download that ran lately, per second, its speed.
        var each: [DownloadID: [Int64: Int64]] = [:]
    }

    private struct State {
        var entries: [DownloadID: [Entry]] = [:]
        /// Downloads in the order their history began, to forget the oldest.
        var order: [DownloadID] = []
        /// Per download, the mirrors dropped in this run and why.
        var dropped: [DownloadID: [String: String]] = [:]
        var speeds = Speeds()
    }

    private let state = Mutex(State())
    private let origin = ContinuousClock.now
    private let clock = ContinuousClock()

    /// The clock's whole seconds since the log began.
    private var second: Int64 { (clock.now - origin).components.seconds }

    /// Takes in one event.
    func record(_ event: DownloadEvent) {
        let now = second
        let line: String?
        switch event.change {
        case .added: line = "added"
        case .status(let status):
            line = Self.describe(status)
            if status != .running { stopped(event.id, at: now) }
        case .progress(let progress):
            sample(event.id, Int64(progress.bytesPerSecond), at: now)
            line = nil
        case .restarted(let reason): line = "started over: \(Self.describe(reason))"
        case .retrying(let error, let attempt, let delay):
            let wait = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            line = "attempt \(attempt) failed (\(error.summary)); trying again in \(String(format: "%.1f", wait)) s"
        case .waitingForSpace(let shortage):
            line = shortage.map(\.description) ?? "there is room again: going on"
        case .mirrorDropped(let url, let reason): line = "mirror \(url.absoluteString) dropped: \(reason)"
        case .connections(let count, let reason): line = "\(count) connections: \(reason)"
        case .fileChanged(let how, let action): line = "the completed file \(how): \(Self.describe(action))"
        case .verified(let verification, let sources):
            let served =
                sources.count > 1
                ? "; " + sources.map { "\($0.bytes) bytes from \($0.url.host ?? "?")" }.joined(separator: ", ") : ""
            line = verification.description + served
        }
        guard let line else { return }
        let entry = Entry(at: Date(), text: line)
        state.withLock { state in
            if state.entries[event.id] == nil {
                state.order.append(event.id)
                if state.order.count > Self.downloadsKept {
                    let forgotten = state.order.prefix(state.order.count - Self.downloadsKept)
                    for id in forgotten {
                        state.entries[id] = nil
                        state.dropped[id] = nil
                    }
                    state.order.removeFirst(forgotten.count)
                }
            }
            if case .mirrorDropped(let url, let reason) = event.change {
                state.dropped[event.id, default: [:]][url.absoluteString] = reason
            }
            state.entries[event.id, default: []].append(entry)
            if state.entries[event.id]!.count > Self.entriesPerDownload {
                state.entries[event.id]!.removeFirst()
            }
        }
    }

    /// The history of `id`, oldest first.
    func history(of id: DownloadID) -> [Entry] {
        state.withLock { $0.entries[id] ?? [] }
    }

    /// The mirrors of `id` dropped since the daemon started, by URL, with the reason.
    func droppedMirrors(of id: DownloadID) -> [String: String] {
        state.withLock { $0.dropped[id] ?? [:] }
    }

    /// The total speed of each of the last `count` seconds, oldest first (0 for a second without any).
    func totalSpeeds(last count: Int = seconds) -> [Int64] {
        let now = second
        return state.withLock { state in
            // A download that reported a speed less than two seconds ago still moves at it (progress comes only
            // when bytes arrive).
            let current = state.speeds.latest.values.reduce(Int64(0)) {
                $0 + (now - $1.second < 2 ? $1.bytesPerSecond : 0)
            }
            return (0..<count).map { index in
                let at = now - Int64(count - 1 - index)
                return at == now ? max(current, state.speeds.total[at] ?? 0) : state.speeds.total[at] ?? 0
            }
        }
    }

    /// The speed of `id` in each of the last `count` seconds, oldest first.
    func speeds(of id: DownloadID, last count: Int = 120) -> [Int64] {
        let now = second
        return state.withLock { state in
            let each = state.speeds.each[id] ?? [:]
            return (0..<count).map { each[now - Int64(count - 1 - $0)] ?? 0 }
        }
    }

    private func sample(_ id: DownloadID, _ bytesPerSecond: Int64, at now: Int64) {
        state.withLock { state in
            state.speeds.latest[id] = (bytesPerSecond, now)
            state.speeds.each[id, default: [:]][now] = bytesPerSecond
            state.speeds.total[now] = state.speeds.latest.values.reduce(Int64(0)) {
                $0 + (now - $1.second < 2 ? $1.bytesPerSecond : 0)
            }
            Self.prune(&state.speeds, now: now)
        }
    }

    private func stopped(_ id: DownloadID, at now: Int64) {
        state.withLock { state in
            guard state.speeds.latest.removeValue(forKey: id) != nil else { return }
            state.speeds.total[now] = state.speeds.latest.values.reduce(Int64(0)) {
                $0 + (now - $1.second < 2 ? $1.bytesPerSecond : 0)
            }
        }
    }

    /// Forgets samples older than ``seconds``, checked once in a while (every 64 s of samples).
    private static func prune(_ speeds: inout Speeds, now: Int64) {
        guard now % 64 == 0 || speeds.total.count > seconds * 2 else { return }
        let oldest = now - Int64(seconds)
        speeds.total = speeds.total.filter { $0.key > oldest }
        for (id, samples) in speeds.each {
            let kept = samples.filter { $0.key > oldest }
            speeds.each[id] = kept.isEmpty ? nil : kept
        }
    }

    static func describe(_ status: DownloadStatus) -> String {
        switch status {
        case .queued: "queued"
        case .running: "started"
        case .paused: "paused"
        case .completed: "completed"
        case .failed(let error): "failed: \(error.summary)"
        case .removed: "removed"
        case .interrupted: "interrupted: its command ended first"
        }
    }

    static func describe(_ reason: RestartReason) -> String {
        switch reason {
        case .serverIgnoredRange: "the server ignored the range asked for"
        case .resourceChanged: "the file changed on the server"
        case .contentMismatch: "the bytes fetched again differ from those on disk"
        case .rangeMismatch: "the server sent another range than the one asked for"
        case .checksumMismatch: "the checksum did not match"
        }
    }

    static func describe(_ action: DownloadEvent.FileChangeAction) -> String {
        switch action {
        case .checkingItsBytes: "checking its bytes"
        case .fetchingAgain: "fetching it again"
        case .resumingFromItsBytes: "resuming from its bytes"
        }
    }
}
