import Foundation
import Synchronization

/// Fans events out to every subscriber's `AsyncStream`, from any task, without an actor hop.
final class EventHub: Sendable {
    private struct Subscriber {
        var download: DownloadID?
        var continuation: AsyncStream<DownloadEvent>.Continuation
    }

    private struct Subscribers {
        var all: [Int: Subscriber] = [:]
        /// The next subscriber's token: a counter, not a `UUID` (which reads `/dev/urandom` on Linux, three system
        /// calls for every download `haul get` follows).
        var nextToken = 0
    }

    private let subscribers = Mutex(Subscribers())
    /// Events kept for a subscriber that does not keep up; older progress is dropped first.
    static let bufferSize = 4096

    /// A stream of every event, or only those of `download`; the per-download stream ends with the download
    /// (completed, failed or removed).
    func subscribe(to download: DownloadID? = nil) -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: DownloadEvent.self, bufferingPolicy: .bufferingNewest(Self.bufferSize))
        let token = subscribers.withLock { subscribers in
            defer { subscribers.nextToken += 1 }
            subscribers.all[subscribers.nextToken] = Subscriber(download: download, continuation: continuation)
            return subscribers.nextToken
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.all.removeValue(forKey: token) }
        }
        return stream
    }

    /// Sends an event of `id` to its subscribers; `change` is made only if there is one (adding 100,000 downloads
    /// with nobody watching makes no snapshots). It is made under the hub's lock, so it must not yield itself.
    func yield(_ id: DownloadID, _ change: @autoclosure () -> DownloadEvent.Change) {
        var event: DownloadEvent?
        var ends = false
        let targets = subscribers.withLock { subscribers in
            var targets: [(AsyncStream<DownloadEvent>.Continuation, Bool)] = []
            for (token, subscriber) in subscribers.all where subscriber.download == nil || subscriber.download == id {
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
                if finishes { subscribers.all.removeValue(forKey: token) }
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
        let all = subscribers.withLock { subscribers in
            defer { subscribers.all.removeAll() }
            return Array(subscribers.all.values)
        }
        for subscriber in all { subscriber.continuation.finish() }
    }
}
