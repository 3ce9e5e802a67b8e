import Foundation
import Synchronization

/// Fans events out to every subscriber, from any task, without an actor hop: to an `AsyncStream`, or to a handler
/// called at once (``DownloadManager/observeEvents(_:)``).
final class EventHub: DownloadEventSink {
    /// Where a subscriber's events go.
    private enum Delivery {
        case stream(AsyncStream<DownloadEvent>.Continuation)
        /// `ended`: called once if the hub finishes while it is subscribed.
        case handler(@Sendable (DownloadEvent) -> Void, ended: (@Sendable () -> Void)?)
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
        /// Set by ``finishAll()``: a later subscriber is ended at once.
        var finished = false
    }

    private let subscribers = Mutex(Subscribers())
    /// Events kept for a subscriber that does not keep up; older progress is dropped first.
    static let bufferSize = 4096

    /// A stream of every event, or only those of `download`; the per-download stream ends with the download
    /// (completed, failed or removed). Every stream ends when the hub finishes (at once, if it has).
    func subscribe(to download: DownloadID? = nil) -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: DownloadEvent.self, bufferingPolicy: .bufferingNewest(Self.bufferSize))
        guard let token = add(Subscriber(download: download, delivery: .stream(continuation))) else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(token) }
        return stream
    }

    /// Calls `handler` with every event from now on, on the yielding task, until ``unsubscribe(_:)`` or
    /// ``finishAll()``, which calls `ended` (at once, if the hub has finished); returns the token that ends it.
    func subscribe(
        handler: @escaping @Sendable (DownloadEvent) -> Void, ended: (@Sendable () -> Void)? = nil
    ) -> Int {
        guard let token = add(Subscriber(download: nil, delivery: .handler(handler, ended: ended))) else {
            ended?()
            return -1
        }
        return token
    }

    /// Adds `subscriber` under the next token and returns the token; nil once the hub has finished.
    private func add(_ subscriber: Subscriber) -> Int? {
        subscribers.withLock { subscribers in
            guard !subscribers.finished else { return nil }
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
        // The first two targets kept apart: most events have one or two (`haul get`: its display and its wait), and
        // an array for them was an allocation per event. A struct, not a tuple: an optional tuple is copied and
        // destroyed through the runtime's generic tuple metadata.
        var first: Target?
        var second: Target?
        var others: [Target] = []
        subscribers.withLock { subscribers in
            for (token, subscriber) in subscribers.all where subscriber.download == nil || subscriber.download == id {
                if event == nil {
                    let made = change()
                    event = DownloadEvent(id: id, change: made)
                    switch made {
                    case .status(.completed), .status(.failed), .status(.removed): ends = true
                    default: ends = false
                    }
                }
                let target = Target(
                    token: token, delivery: subscriber.delivery, finishes: ends && subscriber.download == id)
                if first == nil {
                    first = target
                } else if second == nil {
                    second = target
                } else {
                    others.append(target)
                }
                if target.finishes { subscribers.all.removeValue(forKey: token) }
            }
        }
        guard let event, let first else { return }
        // In the order they subscribed, not the dictionary's (which differs from one process to the next): a display
        // that subscribed before a waiter has applied a download's end before the waiter wakes the task that reads
        // the display (`haul get` exited 0 over a failed download when the waiter came first).
        guard let second else { return first.deliver(event) }
        guard others.isEmpty else {
            for target in ([first, second] + others).sorted(by: { $0.token < $1.token }) { target.deliver(event) }
            return
        }
        let (earlier, later) = first.token < second.token ? (first, second) : (second, first)
        earlier.deliver(event)
        later.deliver(event)
    }

    /// Where one event goes: a subscriber's delivery, and whether the event ends its subscription.
    private struct Target {
        /// The subscriber's token: the order it subscribed in.
        let token: Int
        let delivery: Delivery
        let finishes: Bool

        func deliver(_ event: DownloadEvent) { EventHub.deliver(event, to: delivery, finishing: finishes) }
    }

    private static func deliver(_ event: DownloadEvent, to delivery: Delivery, finishing: Bool) {
        switch delivery {
        case .stream(let continuation):
            continuation.yield(event)
            if finishing { continuation.finish() }
        case .handler(let handler, _):
            handler(event)
        }
    }

    /// Ends every subscription (streams finish, handlers' `ended` is called) and every later one at once.
    func finishAll() {
        let all = subscribers.withLock { subscribers in
            subscribers.finished = true
            defer { subscribers.all.removeAll() }
            return Array(subscribers.all.values)
        }
        for subscriber in all {
            switch subscriber.delivery {
            case .stream(let continuation): continuation.finish()
            case .handler(_, let ended): ended?()
            }
        }
    }
}

/// A job's retrier reports through the hub it is given.
