/// The manager's records by id, kept densely: the records in one array, and a small index from id to position.
///
/// A `[DownloadID: DownloadRecord]` of 100,000 records had 262,144 buckets (a dictionary's power of two at most
/// three-quarters full), each as wide as a record: 56 MB, where the array holds 100,000 and the index 262,144 integers.
///
/// Every change is numbered, so a look at the store can tell which records changed here while it awaited the store
/// (``beginLook()``, ``changed(_:since:)``): the stored view of those is older than this one, and must not replace it.
struct RecordTable: Sendable {
    private var rows: [DownloadRecord] = []
    private var positions: [DownloadID: Int] = [:]
    /// The number of the last change of each row (beside `rows`).
    private var rowChanges: [UInt64] = []
    /// The number of the last change of any row.
    private var lastChange: UInt64 = 0
    /// Looks at the store under way, and the rows removed while one was (with the number of their removal).
    private var looksUnderWay = 0
    private var removedDuringLooks: [DownloadID: UInt64] = [:]

    var count: Int { rows.count }

    /// The ids, in no particular order (the order records came in, unless some were removed).
    var ids: [DownloadID] { rows.map(\.downloadID) }

    /// The records in id order (no sorting when, as usual, they came in that order).
    var inIDOrder: [DownloadRecord] {
        var ascending = true
        for index in rows.indices.dropFirst() where rows[index - 1].downloadID > rows[index].downloadID {
            ascending = false
            break
        }
        return ascending ? rows : rows.sorted { $0.downloadID < $1.downloadID }
    }

    /// Where the record of `id` writes, without copying the record (looked up for many records at once).
    func destinationPath(of id: DownloadID) -> String? { positions[id].flatMap { rows[$0].destinationPath } }

    /// The URL of the record of `id`, without copying the record.
    func url(of id: DownloadID) -> String? { positions[id].map { rows[$0].url } }

    /// Whether there is a record of `id` (without copying it).
    func contains(_ id: DownloadID) -> Bool { positions[id] != nil }

    /// The state of the record of `id`, without copying the record.
    func state(of id: DownloadID) -> DownloadState? { positions[id].map { rows[$0].state } }

    /// Changes the record of `id` in place (numbered as any change) and returns what `change` returns; nil, with
    /// nothing changed, if there is none. Setting a copy back through the subscript copies the record twice.
    @discardableResult
    mutating func modify<Result>(_ id: DownloadID, _ change: (inout DownloadRecord) -> Result) -> Result? {
        guard let position = positions[id] else { return nil }
        lastChange &+= 1
        rowChanges[position] = lastChange
        return change(&rows[position])
    }

    /// Makes room for `capacity` records; growing still at least doubles, so one more each time is not quadratic.
    mutating func reserveCapacity(_ capacity: Int) {
        guard capacity > rows.capacity else { return }
        rows.reserveCapacity(rows.isEmpty ? capacity : max(capacity, rows.capacity * 2))
        rowChanges.reserveCapacity(rows.capacity)
        positions.reserveCapacity(capacity)
    }

    /// The record of `id`; setting nil removes it.
    subscript(id: DownloadID) -> DownloadRecord? {
        get { positions[id].map { rows[$0] } }
        set {
            if let newValue {
                lastChange &+= 1
                if let position = positions[id] {
                    rows[position] = newValue
                    rowChanges[position] = lastChange
                } else {
                    positions[id] = rows.count
                    rows.append(newValue)
                    rowChanges.append(lastChange)
                }
            } else {
                removeValue(forKey: id)
            }
        }
    }

    /// Removes the record of `id` and returns it (the last record takes its place).
    @discardableResult
    mutating func removeValue(forKey id: DownloadID) -> DownloadRecord? {
        guard let position = positions.removeValue(forKey: id) else { return nil }
        lastChange &+= 1
        if looksUnderWay > 0 { removedDuringLooks[id] = lastChange }
        let last = rows.count - 1
        if position != last {
            rows.swapAt(position, last)
            rowChanges.swapAt(position, last)
            positions[rows[position].downloadID] = position
        }
        rowChanges.removeLast()
        return rows.removeLast()
    }

    /// A look at the store begins: returns the mark to give ``changed(_:since:)`` once the store has answered, and
    /// ``endLook()`` when the answer is taken in.
    mutating func beginLook() -> UInt64 {
        looksUnderWay += 1
        return lastChange
    }

    /// A look begun with ``beginLook()`` is over.
    mutating func endLook() {
        looksUnderWay = max(0, looksUnderWay - 1)
        if looksUnderWay == 0 { removedDuringLooks = [:] }
    }

    /// Whether the record of `id` was changed, added or removed here since `mark` (from ``beginLook()``): what the
    /// store said of it in the meantime may be older than what is held here.
    func changed(_ id: DownloadID, since mark: UInt64) -> Bool {
        if let position = positions[id] { return rowChanges[position] > mark }
        return (removedDuringLooks[id] ?? 0) > mark
    }
}
