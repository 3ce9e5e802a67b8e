import Foundation

/// The outbox table of an in-memory database (``InMemoryDatabase``): rows written by the state changes of the
/// handles that enabled it, in the same lock as the change, as SQLite's temporary triggers write them in the change's
/// transaction (``SQLiteEventOutbox``).
struct InMemoryOutbox: Sendable {
    /// One row: an event for one target, with its delivery schedule.
    struct Row: Sendable {
        var event: OutboxEvent
        var nextAttempt: Date
        var lastError: String?
    }

    /// In sequence order.
    var rows: [Row] = []
    /// The last sequence given (`AUTOINCREMENT`: never one given before).
    var sequence: Int64 = 0
    /// For each handle that enabled the outbox, the targets of each kind of event, in the order they were given: only
    /// that handle's own changes are recorded (SQLite's triggers are temporary, on its own connection).
    var takers: [Int: [OutboxEventKind: [String]]] = [:]
    /// Which outbox delivers to each target: one at a time, until it closes or is gone.
    var targetLocks: [String: Int] = [:]

    /// From now on, `owner`'s state changes that `targets` take make rows. A kind already recorded keeps its
    /// targets (SQLite's `CREATE TEMP TRIGGER IF NOT EXISTS`).
    mutating func enable(_ targets: [EventTarget], for owner: Int) {
        for kind in OutboxEventKind.allCases where takers[owner]?[kind] == nil {
            let names = targets.filter { $0.kinds.contains(kind) }.map(\.name)
            if !names.isEmpty { takers[owner, default: [:]][kind] = names }
        }
    }

    /// A row's state went from `old` to the state of `new` (an update that wrote the state column).
    mutating func recordChange(from old: StoredValue, to new: InMemoryDatabase.Row, by owner: Int) {
        guard let takers = takers[owner], case .text(let text) = new[.state], old != new[.state],
            let state = DownloadState(rawValue: text), let kind = OutboxEventKind.reporting(state)
        else { return }
        record(kind, of: new, for: takers[kind] ?? [])
    }

    /// A row was deleted: a stop, if it had not finished.
    mutating func recordRemoval(of old: InMemoryDatabase.Row, by owner: Int) {
        guard let takers = takers[owner], case .text(let text) = old[.state], let state = DownloadState(rawValue: text),
            OutboxEventKind.stoppableStates.contains(state)
        else { return }
        record(.stop, of: old, for: takers[.stop] ?? [])
    }

    /// One row per target, with one event id, from the values of `row`.
    private mutating func record(_ kind: OutboxEventKind, of row: InMemoryDatabase.Row, for targets: [String]) {
        guard !targets.isEmpty else { return }
        let eventID = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let now = Date()
        func text(_ column: DownloadColumn) -> String? {
            if case .text(let value) = row[column] { value } else { nil }
        }
        func integer(_ column: DownloadColumn) -> Int64? {
            if case .integer(let value) = row[column] { value } else { nil }
        }
        for target in targets {
            sequence += 1
            let event = OutboxEvent(
                sequence: sequence, eventID: eventID, target: target, downloadID: DownloadID(rawValue: row.id),
                kind: kind, url: text(.url) ?? "", file: text(.destinationPath),
                size: integer(.fileSize) ?? integer(.totalBytes), sha256: text(.sha256),
                errorCode: integer(.errorCode).map(Int.init), error: text(.errorSummary), createdAt: now, attempts: 0)
            rows.append(Row(event: event, nextAttempt: now))
        }
    }

    /// Takes the locks of the targets no other outbox holds; returns the oldest row of each download and target
    /// whose target `owner` holds, that is due at `now` and not in `excluding`, at most `limit`.
    mutating func dueEvents(
        targets: [String], limit: Int, excluding: Set<Int64>, now: Date, by owner: Int
    ) -> [OutboxEvent] {
        var mine: Set<String> = []
        for target in targets where (targetLocks[target] ?? owner) == owner {
            targetLocks[target] = owner
            mine.insert(target)
        }
        guard !mine.isEmpty, limit > 0 else { return [] }
        var due: [OutboxEvent] = []
        // A row waits behind any older one of its download and target, due or not, excluded or not.
        var seen: Set<String> = []
        for row in rows where seen.insert("\(row.event.downloadID.rawValue) \(row.event.target)").inserted {
            guard mine.contains(row.event.target), row.nextAttempt <= now,
                !excluding.contains(row.event.sequence)
            else { continue }
            due.append(row.event)
            if due.count == limit { break }
        }
        return due
    }

    /// Deletes the row of `sequence`; returns whether there was one.
    mutating func settle(_ sequence: Int64) -> Bool {
        guard let index = rows.firstIndex(where: { $0.event.sequence == sequence }) else { return false }
        rows.remove(at: index)
        return true
    }

    /// Schedules the row of `sequence` again; returns whether there was one.
    mutating func postpone(_ sequence: Int64, attempts: Int, next: Date, reason: String) -> Bool {
        guard let index = rows.firstIndex(where: { $0.event.sequence == sequence }) else { return false }
        rows[index].event.attempts = attempts
        rows[index].nextAttempt = next
        rows[index].lastError = reason
        return true
    }

    func pending(targets: Set<String>) -> Int { rows.count { targets.contains($0.event.target) } }

    /// Gives up the target locks `owner` holds.
    mutating func close(_ owner: Int) {
        targetLocks = targetLocks.filter { $0.value != owner }
    }
}

/// The ``EventOutbox`` of an ``InMemoryDownloadStore``: the rows its handle's state changes write (``InMemoryOutbox``).
///
/// As with ``SQLiteEventOutbox``, one outbox at a time delivers to a target: it holds the target's lock until
/// ``close()`` or until it is gone (as a process's lock ends with it), so rows need no lease. Nothing survives the
/// process: an event not delivered when it ends is lost with the downloads themselves.
final class InMemoryEventOutbox: EventOutbox {
    private let database: InMemoryDatabase
    /// The handle whose changes this outbox records: its writes count as that handle's own commits.
    private let writer: Int
    /// The holder of this outbox's target locks.
    private let owner: Int

    init(database: InMemoryDatabase, writer: Int, targets: [EventTarget]) {
        self.database = database
        self.writer = writer
        owner = database.state.withLock { state in
            state.outbox.enable(targets, for: writer)
            return state.newOwner()
        }
    }

    deinit { close() }

    func dueEvents(
        targets: [String], limit: Int, lease: Duration, excluding: Set<Int64>
    ) throws(DownloadError) -> [OutboxEvent] {
        database.state.withLock {
            $0.outbox.dueEvents(targets: targets, limit: limit, excluding: excluding, now: Date(), by: owner)
        }
    }

    func settle(_ sequence: Int64) throws(DownloadError) {
        database.state.withLock { if $0.outbox.settle(sequence) { $0.committed(by: writer) } }
    }

    func postpone(_ sequence: Int64, attempts: Int, next: Date, reason: String) throws(DownloadError) {
        database.state.withLock {
            if $0.outbox.postpone(sequence, attempts: attempts, next: next, reason: reason) { $0.committed(by: writer) }
        }
    }

    func depth() throws(DownloadError) -> Int { database.state.withLock { $0.outbox.rows.count } }

    func pending(targets: [String]) throws(DownloadError) -> Int {
        database.state.withLock { $0.outbox.pending(targets: Set(targets)) }
    }

    func close() { database.state.withLock { $0.outbox.close(owner) } }
}
