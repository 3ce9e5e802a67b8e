import Foundation
import Synchronization

/// Fans events out to every subscriber's `AsyncStream`, from any task, without an actor hop.
final class EventHub: Sendable {
    private struct Subscriber {
        var download: DownloadID?
        var continuation: AsyncStream<DownloadEvent>.Continuation
    }

    private let subscribers = Mutex<[UUID: Subscriber]>([:])
    /// Events kept for a subscriber that does not keep up; older progress is dropped first.
    static let bufferSize = 4096

    /// A stream of every event, or only those of `download`; the per-download stream ends with the download
    /// (completed, failed or removed).
    func subscribe(to download: DownloadID? = nil) -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: DownloadEvent.self, bufferingPolicy: .bufferingNewest(Self.bufferSize))
        let token = UUID()
        subscribers.withLock { $0[token] = Subscriber(download: download, continuation: continuation) }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: token) }
        }
        return stream
    }

    /// Sends an event of `id` to its subscribers; `change` is made only if there is one (adding 100,000 downloads
    /// with nobody watching makes no snapshots).
    func yield(_ id: DownloadID, _ change: @autoclosure () -> DownloadEvent.Change) {
        var event: DownloadEvent?
        var ends = false
        let targets = subscribers.withLock { all in
            var targets: [(AsyncStream<DownloadEvent>.Continuation, Bool)] = []
            for (token, subscriber) in all where subscriber.download == nil || subscriber.download == id {
                if event == nil {
                    let made = change()
                    event = DownloadEvent(id: id, change: made)
                    switch made {
                    case .status(.completed), .status(.failed), .status(.removed): ends = true
                    default: ends = false
                    }
                }
                let finishes = ends && subscriber.download == id
                targets.append((subscriber.continuation, finishes))
                if finishes { all.removeValue(forKey: token) }
            }
            return targets
        }
        guard let event else { return }
        for (continuation, finishes) in targets {
            continuation.yield(event)
            if finishes { continuation.finish() }
        }
    }

    func finishAll() {
        let all = subscribers.withLock { all in
            defer { all.removeAll() }
            return Array(all.values)
        }
        for subscriber in all { subscriber.continuation.finish() }
    }
}
