/// The manager's records by id, kept densely: the records in one array, and a small index from id to position.
///
/// A `[DownloadID: DownloadRecord]` of 100,000 records had 262,144 buckets (a dictionary's power of two at most
/// three-quarters full), each as wide as a record: 56 MB, where the array holds 100,000 and the index 262,144 integers.
struct RecordTable: Sendable {
    private var rows: [DownloadRecord] = []
    private var positions: [DownloadID: Int] = [:]

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

    /// Makes room for `capacity` records; growing still at least doubles, so one more each time is not quadratic.
    mutating func reserveCapacity(_ capacity: Int) {
        guard capacity > rows.capacity else { return }
        rows.reserveCapacity(rows.isEmpty ? capacity : max(capacity, rows.capacity * 2))
        positions.reserveCapacity(capacity)
    }

    /// The record of `id`; setting nil removes it.
    subscript(id: DownloadID) -> DownloadRecord? {
        get { positions[id].map { rows[$0] } }
        set {
            if let newValue {
                if let position = positions[id] {
                    rows[position] = newValue
                } else {
                    positions[id] = rows.count
                    rows.append(newValue)
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
        let last = rows.count - 1
        if position != last {
            rows.swapAt(position, last)
            positions[rows[position].downloadID] = position
        }
        return rows.removeLast()
    }
}
