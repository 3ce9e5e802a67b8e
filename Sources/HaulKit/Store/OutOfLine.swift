/// A value a ``DownloadRecord`` keeps out of line, copied on write: copying a record copies a reference, and records
/// read together can share one allocation (a batch added together has one set of options).
///
/// A queue of 100,000 records holds each record two or three times (the store's answer, the manager's table, the
/// snapshots): inline, the options and the job's columns made a record ~500 bytes to copy and keep.
struct OutOfLine<Value: Sendable & Equatable>: Sendable, Equatable {
    /// `@unchecked Sendable`: ``OutOfLine`` writes the value only when it holds the sole reference (otherwise it copies
    /// first), so a box that two threads can reach is never written.
    final class Box: @unchecked Sendable {
        fileprivate(set) var value: Value
        init(_ value: Value) { self.value = value }
    }

    private var box: Box

    init(_ value: Value) { box = Box(value) }

    /// Shares `box` (until either side writes).
    init(sharing box: Box) { self.box = box }

    var value: Value {
        get { box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }

    /// Whether both hold the same box (so the same value), without comparing values.
    func isShared(with other: Self) -> Bool { box === other.box }

    static func == (a: Self, b: Self) -> Bool { a.box === b.box || a.box.value == b.box.value }
}
