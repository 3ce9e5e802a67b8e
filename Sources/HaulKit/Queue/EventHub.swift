import Foundation
import Synchronization

/// Fans events out to every subscriber, from any task, without an actor hop: to an `AsyncStream`, or to a handler
/// called at once (``DownloadManager/observeEvents(_:)``).
final class EventHub: Sendable {
    /// Where a subscriber's events go.
    private enum Delivery {
        case stream(AsyncStream<DownloadEvent>.Continuation)
        case handler(@Sendable (DownloadEvent) -> Void)
    }

    private struct Subscriber {
        var download: DownloadID?
        var delivery: Delivery
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
        let token = add(Subscriber(download: download, delivery: .stream(continuation)))
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(token) }
        return stream
    }

    /// Calls `handler` with every event from now on, on the yielding task, until ``unsubscribe(_:)`` or
    /// ``finishAll()``; returns the token that ends it.
    func subscribe(handler: @escaping @Sendable (DownloadEvent) -> Void) -> Int {
        add(Subscriber(download: nil, delivery: .handler(handler)))
    }

    /// Adds `subscriber` under the next token and returns the token.
    private func add(_ subscriber: Subscriber) -> Int {
        subscribers.withLock { subscribers in
            defer { subscribers.nextToken += 1 }
            subscribers.all[subscribers.nextToken] = subscriber
            return subscribers.nextToken
        }
    }

    /// Ends a subscription; an event being delivered to it may still arrive.
    func unsubscribe(_ token: Int) {
        _ = subscribers.withLock { $0.all.removeValue(forKey: token) }
    }

    /// Sends an event of `id` to its subscribers; `change` is made only if there is one (adding 100,000 downloads
    /// with nobody watching makes no snapshots). It is made under the hub's lock, so it must not yield itself.
    func yield(_ id: DownloadID, _ change: @autoclosure () -> DownloadEvent.Change) {
        var event: DownloadEvent?
        var ends = false
        let targets = subscribers.withLock { subscribers in
            var targets: [(Delivery, Bool)] = []
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
                targets.append((subscriber.delivery, finishes))
                if finishes { subscribers.all.removeValue(forKey: token) }
            }
            return targets
        }
        guard let event else { return }
        for (delivery, finishes) in targets {
            switch delivery {
            case .stream(let continuation):
                continuation.yield(event)
                if finishes { continuation.finish() }
            case .handler(let handler):
                handler(event)
            }
        }
    }

    func finishAll() {
        let all = subscribers.withLock { subscribers in
            defer { subscribers.all.removeAll() }
            return Array(subscribers.all.values)
        }
        for subscriber in all {
            if case .stream(let continuation) = subscriber.delivery { continuation.finish() }
        }
    }
}
