import Foundation

/// What happened to a download, as hooks and webhooks report it (aria2's `--on-download-*` names).
package enum OutboxEventKind: String, Sendable, CaseIterable, Hashable, Codable {
    /// The download started (or started again after a pause, an error or a restart): its state became `running`.
    case start
    /// It was paused.
    case pause
    /// It was removed before it finished (aria2's "stop"; aria2 also runs its stop hook for a completion or an error
    /// that has no hook of its own, which the hook runner does too).
    case stop
    /// Its file is complete at its destination.
    case complete
    /// It failed.
    case error

    /// The kind of event a state change reports, or nil for a change nothing reports (`queued`, `interrupted`).
    package static func reporting(_ state: DownloadState) -> OutboxEventKind? {
        switch state {
        case .running: .start
        case .paused: .pause
        case .completed: .complete
        case .failed: .error
        case .queued, .interrupted: nil
        }
    }

    /// The states a removed download reports `stop` from (a finished one removed from the history reports nothing).
    package static let stoppableStates: [DownloadState] = [.queued, .running, .paused, .interrupted]
}

/// One receiver of events: a hook runner or a webhook URL, and the kinds of event it takes.
package struct EventTarget: Hashable, Sendable {
    /// Its name in the outbox (`hook`, `webhook URL`): the outbox keeps one row per event and target, delivered in
    /// order per download and target.
    package var name: String
    /// The kinds it takes; an event of another kind makes no row for it.
    package var kinds: Set<OutboxEventKind>

    package init(name: String, kinds: Set<OutboxEventKind>) {
        self.name = name
        self.kinds = kinds
    }
}

/// An event waiting in the outbox for one target: what the state change recorded, in the same transaction.
package struct OutboxEvent: Sendable, Equatable {
    /// The row's place in the outbox: rows of one download and target are delivered in this order.
    package var sequence: Int64
    /// The event's identity, the same for every target and every delivery attempt (receivers drop duplicates by it).
    package var eventID: String
    package var target: String
    package var downloadID: DownloadID
    package var kind: OutboxEventKind
    package var url: String
    /// The destination path as recorded then (nil before one was chosen).
    package var file: String?
    /// The file's size, where known.
    package var size: Int64?
    /// The SHA-256 of the file (hex), where known: a completed download's.
    package var sha256: String?
    /// The error's stable code (``DownloadError/Code``) and summary, for `error` events.
    package var errorCode: Int?
    package var error: String?
    /// When the state changed.
    package var createdAt: Date
    /// Deliveries tried so far without success.
    package var attempts: Int

    package init(
        sequence: Int64, eventID: String, target: String, downloadID: DownloadID, kind: OutboxEventKind, url: String,
        file: String?, size: Int64?, sha256: String?, errorCode: Int?, error: String?, createdAt: Date, attempts: Int
    ) {
        self.sequence = sequence
        self.eventID = eventID
        self.target = target
        self.downloadID = downloadID
        self.kind = kind
        self.url = url
        self.file = file
        self.size = size
        self.sha256 = sha256
        self.errorCode = errorCode
        self.error = error
        self.createdAt = createdAt
        self.attempts = attempts
    }
}

/// The durable outbox of a store: events written by the store in the transaction of the state change they report
/// (a trigger on the download table), read and settled by the event dispatcher.
///
/// Calls are synchronous and short, as the store's. Delivery is at least once: a row is deleted only after its
/// target took it, so a process killed in between delivers it again after its restart.
package protocol EventOutbox: AnyObject, Sendable {
    /// The next events to deliver to `targets`: for each download and target, its oldest row, and only when that row
    /// is due (`nextAttempt` passed) and no other deliverer holds it. A shared store leases the rows it returns to
    /// this worker for `lease` (another worker takes them after a crash); the embedded store lets one process at a
    /// time deliver to a target (a lock that ends with its holder). `excluding`: rows this process is delivering now.
    nonisolated(nonsending) func dueEvents(
        targets: [String], limit: Int, lease: Duration, excluding: Set<Int64>
    ) async throws(DownloadError)
        -> [OutboxEvent]
    /// The row was delivered (or given up): it is deleted.
    nonisolated(nonsending) func settle(_ sequence: Int64) async throws(DownloadError)
    /// The delivery failed: tried again at `next`, with `attempts` counted and the reason kept for messages.
    nonisolated(nonsending) func postpone(
        _ sequence: Int64, attempts: Int, next: Date, reason: String) async throws(DownloadError)
    /// How many rows wait, for every target.
    nonisolated(nonsending) func depth() async throws(DownloadError) -> Int
    /// How many rows wait for `targets`, due or not, held elsewhere or not.
    nonisolated(nonsending) func pending(targets: [String]) async throws(DownloadError) -> Int
    /// Gives up the rows this process holds (a shared store's leases; the embedded store's target locks).
    nonisolated(nonsending) func close() async
}
