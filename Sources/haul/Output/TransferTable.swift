import Foundation
import HaulKit

/// One download as the command line shows it.
struct TransferEntry: Sendable {
    let id: DownloadID
    var url: URL
    var file: URL?
    var state: DownloadState
    var received: Int64
    var expected: Int64?
    var bytesPerSecond: Double = 0
    var connections = 0
    /// Bytes already on disk when this session started the download (from an earlier run).
    var resumedFrom: Int64?
    var startedAt: ContinuousClock.Instant?
    var finishedAt: ContinuousClock.Instant?
    var error: DownloadError?
    /// It was complete before this session began.
    var wasAlreadyComplete = false

    init(_ snapshot: DownloadSnapshot) {
        id = snapshot.id
        url = snapshot.url
        file = snapshot.file
        state = snapshot.state
        received = snapshot.receivedBytes
        expected = snapshot.totalBytes
        error = snapshot.lastError
    }

    /// The file name if known, else the last part of the URL.
    var name: String {
        if let file { return file.lastPathComponent }
        let last = url.lastPathComponent
        return last.isEmpty || last == "/" ? (url.host ?? url.absoluteString) : last
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

    /// Bytes fetched by this session.
    var transferred: Int64 { max(0, received - (resumedFrom ?? received)) }

    var averageBytesPerSecond: Double? {
        guard let seconds, seconds > 0 else { return nil }
        return Double(transferred) / seconds
    }

    var estimatedSecondsLeft: Double? {
        guard let expected, bytesPerSecond > 0, expected >= received else { return nil }
        return Double(expected - received) / bytesPerSecond
    }
}

/// The downloads a session follows, updated from the manager's events.
struct TransferTable: Sendable {
    private(set) var entries: [DownloadID: TransferEntry] = [:]
    /// In the order they were first seen.
    private(set) var order: [DownloadID] = []

    subscript(id: DownloadID) -> TransferEntry? { entries[id] }

    var all: [TransferEntry] { order.compactMap { entries[$0] } }

    mutating func insert(_ snapshot: DownloadSnapshot) {
        guard entries[snapshot.id] == nil else { return }
        var entry = TransferEntry(snapshot)
        entry.wasAlreadyComplete = snapshot.state == .completed
        entries[snapshot.id] = entry
        order.append(snapshot.id)
    }

    /// Applies one event; returns the entry as it is now, or nil if the download is not followed.
    mutating func apply(_ event: DownloadEvent) -> TransferEntry? {
        if case .added(let snapshot) = event.change { insert(snapshot) }
        guard var entry = entries[event.id] else { return nil }
        let now = ContinuousClock.now
        switch event.change {
        case .added:
            break
        case .status(.running):
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
            entry.state = .failed
            entry.error = entry.error ?? .invalidRequest("removed by another haul command")
            entry.finishedAt = now
        case .progress(let progress):
            entry.received = progress.receivedBytes
            entry.expected = progress.expectedBytes ?? entry.expected
            entry.bytesPerSecond = progress.bytesPerSecond
            entry.connections = progress.activeConnections
        case .restarted:
            entry.received = 0
            entry.resumedFrom = 0
        case .retrying:
            entry.bytesPerSecond = 0
        case .mirrorDropped:
            break
        }
        entries[event.id] = entry
        return entry
    }

    /// Records the path a download got once its name was chosen.
    mutating func update(file: URL?, for id: DownloadID) {
        if let file { entries[id]?.file = file }
    }
}

extension ContinuousClock.Instant {
    func seconds(since start: ContinuousClock.Instant) -> Double {
        let duration = start.duration(to: self)
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
