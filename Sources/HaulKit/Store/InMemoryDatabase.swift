import Foundation
import Synchronization

/// The records of one in-memory database, shared by every handle on it (``InMemoryDownloadStore``) as one SQLite file
/// is shared by the processes that open it: the `download` rows, column by column as SQLite holds them, the id
/// sequence, the claims, the change counters and the event outbox.
///
/// Everything is one value behind one lock: each store call is one ``Mutex/withLock(_:)`` (its transaction), so a
/// call is atomic and calls never interleave. The logic is synchronous `mutating` methods of ``State``; the store
/// only encodes records before and decodes rows after.
final class InMemoryDatabase: Sendable {
    let state = Mutex(State())

    /// One row of the `download` table: its values in the order of ``DownloadColumn/allCases``, as
    /// ``DownloadRecordEncoder`` makes them (dates to the millisecond, as SQLite's text keeps them).
    struct Row: Sendable {
        var id: Int64
        var values: [StoredValue]

        subscript(column: DownloadColumn) -> StoredValue {
            get { values[InMemoryDatabase.position[column]!] }
            set { values[InMemoryDatabase.position[column]!] = newValue }
        }
    }

    /// Each column's place in a row.
    static let position = Dictionary(uniqueKeysWithValues: DownloadColumn.allCases.enumerated().map { ($1, $0) })

    /// The `download` table, in id order (ids only grow, so an insert appends). A reader takes it whole (a copy that
    /// shares its storage until the next write): a snapshot, as a read transaction in WAL mode sees one.
    struct Table: Sendable {
        var rows: [Row] = []

        /// The place of the row of `id`, found by bisection; nil if there is none.
        func index(of id: Int64) -> Int? {
            var low = 0
            var high = rows.count
            while low < high {
                let middle = (low + high) / 2
                if rows[middle].id < id { low = middle + 1 } else { high = middle }
            }
            return low < rows.count && rows[low].id == id ? low : nil
        }

        func row(_ id: Int64) -> Row? { index(of: id).map { rows[$0] } }
    }

    /// The in-memory database's whole state.
    struct State: Sendable {
        var table = Table()
        /// The largest id ever given (SQLite's `sqlite_sequence` of an `AUTOINCREMENT` table): the id of a deleted
        /// record is never given again.
        var sequence: Int64 = 0
        /// Commits that changed anything, by any handle, and by each (``changeToken(for:)``).
        var commits = 0
        var ownCommits: [Int: Int] = [:]
        /// The next handle (or outbox) number: each is an owner of claims or of target locks.
        var nextOwner = 1
        /// Who holds each claimed download.
        var claims: [Int64: Int] = [:]
        var outbox = InMemoryOutbox()

        static let queued = StoredValue.text(DownloadState.queued.rawValue)
        static let running = StoredValue.text(DownloadState.running.rawValue)

        /// A new owner: a handle on the database, or an outbox's lock holder.
        mutating func newOwner() -> Int {
            defer { nextOwner += 1 }
            return nextOwner
        }

        /// What a handle held ends with it, as a process's locks end when it dies: its claims and its event targets.
        mutating func end(_ owner: Int) {
            claims = claims.filter { $0.value != owner }
            ownCommits[owner] = nil
            outbox.takers[owner] = nil
        }

        /// A commit that changed something: every other handle's token moves (SQLite's `data_version`).
        mutating func committed(by owner: Int) {
            commits += 1
            ownCommits[owner, default: 0] += 1
        }

        /// A number that changes whenever a handle other than `owner` commits a change.
        func changeToken(for owner: Int) -> Int { commits - ownCommits[owner, default: 0] }

        // MARK: Writing

        /// Appends rows (every column, the id's value ignored) with the ids SQLite would give them: consecutive, one
        /// past the largest ever given. All or none.
        mutating func insert(_ rows: [[StoredValue]], by owner: Int) throws(DownloadError) -> [Int64] {
            guard !rows.isEmpty else { return [] }
            guard Int64.max - sequence >= Int64(rows.count) else {
                throw .stateDatabase(path: InMemoryDownloadStore.location, reason: "no download id is left")
            }
            var ids: [Int64] = []
            ids.reserveCapacity(rows.count)
            table.rows.reserveCapacity(table.rows.count + rows.count)
            for var values in rows {
                sequence += 1
                values[0] = .integer(sequence)
                table.rows.append(Row(id: sequence, values: values))
                ids.append(sequence)
            }
            committed(by: owner)
            return ids
        }

        /// Writes `columns` (each row's values in their order) of the rows that exist, in order; the last write of an
        /// id wins. A write of the state reports its change to `owner`'s outbox targets.
        mutating func update(
            _ columns: [DownloadColumn], _ rows: [(id: Int64?, values: [StoredValue])], by owner: Int
        ) {
            let positions = columns.map { InMemoryDatabase.position[$0]! }
            let writesState = columns.contains(.state)
            var changed = false
            for (id, values) in rows {
                guard let id, let index = table.index(of: id) else { continue }
                let old = table.rows[index][.state]
                for (position, value) in zip(positions, values) { table.rows[index].values[position] = value }
                if writesState { outbox.recordChange(from: old, to: table.rows[index], by: owner) }
                changed = true
            }
            if changed { committed(by: owner) }
        }

        /// Marks running those of `records` (id, start time) still `queued`, with the change time `now`.
        mutating func recordRunning(_ records: [(id: Int64?, startedAt: StoredValue)], now: Date, by owner: Int) {
            var changed = false
            for (id, startedAt) in records {
                guard let id, let index = table.index(of: id), table.rows[index][.state] == Self.queued else {
                    continue
                }
                table.rows[index][.state] = Self.running
                table.rows[index][.startedAt] = startedAt
                table.rows[index][.updatedAt] = .date(now)
                outbox.recordChange(from: Self.queued, to: table.rows[index], by: owner)
                changed = true
            }
            if changed { committed(by: owner) }
        }

        /// Records a checkpoint unless the part file was cut back since (another generation) or the finishing group
        /// took the record (`finalizing`); returns whether it did.
        mutating func checkpoint(
            _ id: Int64, generation: Int64, durableBytes: Int64, plan: String?, bootID: String?, now: Date,
            by owner: Int
        ) -> Bool {
            guard let index = table.index(of: id), table.rows[index][.generation] == .integer(generation),
                table.rows[index][.finalizing] == .boolean(false)
            else { return false }
            table.rows[index][.durableBytes] = .integer(durableBytes)
            table.rows[index][.bootID] = StoredValue(bootID)
            table.rows[index][.updatedAt] = .date(now)
            if let plan { table.rows[index][.segments] = .text(plan) }
            committed(by: owner)
            return true
        }

        /// Forgets the boot the part file of `id` was written in (the change time stays).
        mutating func distrustUnsyncedBytes(_ id: Int64, by owner: Int) {
            guard let index = table.index(of: id) else { return }
            table.rows[index][.bootID] = .null
            committed(by: owner)
        }

        /// Deletes the rows of `ids`; a download removed before it finished reports a stop.
        mutating func delete(_ ids: Set<Int64>, by owner: Int) {
            guard !ids.isEmpty else { return }
            let before = table.rows.count
            table.rows.removeAll { row in
                guard ids.contains(row.id) else { return false }
                outbox.recordRemoval(of: row, by: owner)
                return true
            }
            if table.rows.count != before { committed(by: owner) }
        }

        // MARK: Claiming

        /// Claims `id` for `owner`: refused while another owner holds it, or if the row is no longer queued or
        /// running (read unless `viewToken` is still `owner`'s token).
        mutating func claim(_ id: Int64, share: HostShare, viewToken: Int?, by owner: Int) -> ClaimOutcome {
            if let holder = claims[id], holder != owner { return .refused }
            claims[id] = owner
            // The host's limit is this process's own (its HTTP connection pool holds it), as with SQLite.
            let granted = ClaimOutcome.granted(connections: max(1, min(share.wanted, share.limit)))
            if let viewToken, changeToken(for: owner) == viewToken { return granted }
            guard let state = table.row(id)?[.state], state == Self.queued || state == Self.running else {
                claims[id] = nil
                return .refused
            }
            return granted
        }

        /// Gives up `owner`'s claim of `id` (nothing if another owner holds it).
        mutating func release(_ id: Int64, by owner: Int) {
            if claims[id] == owner { claims[id] = nil }
        }

        /// Those of `ids` another owner than `owner` holds.
        func claimedElsewhere(_ ids: [Int64], by owner: Int) -> Set<Int64> {
            Set(ids.filter { claims[$0].map { $0 != owner } ?? false })
        }
    }
}
