/// A byte range of the file fetched by one connection at a time.
package struct Segment: Codable, Sendable, Equatable {
    var id: Int
    /// First byte.
    var start: Int64
    /// One past the last byte; shrinks when another connection takes over the second half.
    var end: Int64
    /// Bytes done from `start`.
    var written: Int64

    /// The next byte to fetch.
    var next: Int64 { start + written }
    var remaining: Int64 { max(0, end - next) }
    var isDone: Bool { next >= end }
}

/// Splits a file among connections and rebalances as they finish, so they all finish together.
///
/// The policy is aria2's: start with equal parts; when a connection has nothing left, it takes the second half of
/// the largest remaining part being fetched (split at the midpoint of what is left, never leaving a part below the
/// minimum size). Unlike aria2, it prefers a tail that no running request covers, so a split rarely cuts a
/// connection short (the bytes in flight on a cut connection are sent by the server and thrown away).
/// Pure: no I/O, no clock; every byte of `0..<total` belongs to exactly one segment.
struct SegmentPlanner: Sendable, Equatable {
    private(set) var segments: [Segment]
    private(set) var busy: Set<Int> = []
    /// A running request is cut only if at least this many minimum sizes of it are left.
    static let cutFactor: Int64 = 8
    /// Where the running request of each busy segment ends (exclusive), when known.
    private(set) var requestedEnds: [Int: Int64] = [:]
    let total: Int64
    let minimumSize: Int64
    private var nextID: Int

    /// Plans `0..<total` for `connections`, the first `done` bytes already on disk.
    init(total: Int64, done: Int64, connections: Int, minimumSize: Int64) {
        self.total = total
        self.minimumSize = max(1, minimumSize)
        var segments: [Segment] = []
        if done > 0 { segments.append(Segment(id: 0, start: 0, end: done, written: done)) }
        let remaining = total - done
        let count = Int(max(1, min(Int64(max(1, connections)), remaining / self.minimumSize)))
        let size = remaining / Int64(count)
        var start = done
        for index in 0..<count where start < total || segments.isEmpty {
            let end = index == count - 1 ? total : start + size
            segments.append(Segment(id: segments.count, start: start, end: end, written: 0))
            start = end
        }
        self.segments = segments
        nextID = segments.count
    }

    /// Continues a plan saved earlier (no segment is busy).
    init?(restoring saved: [Segment], total: Int64, minimumSize: Int64) {
        let sorted = saved.sorted { $0.start < $1.start }
        var expected: Int64 = 0
        for segment in sorted {
            guard segment.start == expected, segment.end > segment.start, segment.written >= 0,
                segment.written <= segment.end - segment.start
            else { return nil }
            expected = segment.end
        }
        guard expected == total, !sorted.isEmpty else { return nil }
        self.total = total
        self.minimumSize = max(1, minimumSize)
        segments = sorted
        nextID = (sorted.map(\.id).max() ?? 0) + 1
    }

    /// Bytes on disk, summed over segments.
    var receivedBytes: Int64 { segments.reduce(0) { $0 + $1.written } }

    /// Bytes on disk from offset 0 without a gap.
    var contiguousBytes: Int64 {
        var end: Int64 = 0
        for segment in segments {
            guard segment.start == end else { break }
            end = segment.next
            if !segment.isDone { break }
        }
        return end
    }

    var isComplete: Bool { segments.allSatisfy(\.isDone) }

    func segment(_ id: Int) -> Segment? { segments.first { $0.id == id } }

    /// Gives an idle connection work: the first unfinished idle segment, else part of a busy one.
    ///
    /// From a busy segment it prefers the tail that no running request covers yet (see ``requesting(_:through:)``),
    /// which cuts no connection short; it cuts the largest running part at the middle of what is left only when at
    /// least ``cutFactor`` minimum sizes are left and that gives at least twice as much work.
    mutating func claim() -> Segment? {
        if let index = segments.firstIndex(where: { !$0.isDone && !busy.contains($0.id) }) {
            busy.insert(segments[index].id)
            return segments[index]
        }
        let working = segments.indices.filter { busy.contains(segments[$0].id) && !segments[$0].isDone }
        // The largest tail beyond a running request, at least the minimum size.
        let free = working.compactMap { index -> (index: Int, split: Int64)? in
            let segment = segments[index]
            guard let requested = requestedEnds[segment.id] else { return nil }
            let split = max(segment.next + segment.remaining / 2, requested)
            return segment.end - split >= minimumSize ? (index, split) : nil
        }.max { segments[$0.index].end - $0.split < segments[$1.index].end - $1.split }
        // The largest running part, cut at the middle of what is left: only a large one, since what the server has
        // already sent on the cut connection is wasted (on a fast link, most of a small request is in flight).
        let cut = working.max { segments[$0].remaining < segments[$1].remaining }
            .flatMap { segments[$0].remaining >= Self.cutFactor * minimumSize ? $0 : nil }
        if let free, cut.map({ segments[$0].remaining / 2 <= 2 * (segments[free.index].end - free.split) }) ?? true {
            return take(from: free.index, at: free.split)
        }
        guard let cut else { return nil }
        return take(from: cut, at: segments[cut].next + segments[cut].remaining / 2)
    }

    /// Splits segment `index` at `split`; the second part is new, busy, and returned.
    private mutating func take(from index: Int, at split: Int64) -> Segment {
        let victim = segments[index]
        segments[index].end = split
        let taken = Segment(id: nextID, start: split, end: victim.end, written: 0)
        nextID += 1
        segments.insert(taken, at: index + 1)
        busy.insert(taken.id)
        return taken
    }

    /// Records that the connection on segment `id` asked the server for bytes up to `end` (exclusive): a later
    /// split at or beyond it lets that request run to its end.
    mutating func requesting(_ id: Int, through end: Int64) {
        requestedEnds[id] = end
    }

    /// Records that segment `id` has `written` bytes done from its start (fewer than before when a mirror's
    /// unconfirmed bytes are forgotten).
    mutating func record(_ id: Int, written: Int64) {
        guard let index = segments.firstIndex(where: { $0.id == id }) else { return }
        segments[index].written = min(written, segments[index].end - segments[index].start)
    }

    /// The connection on segment `id` stopped (finished, failed or gave up): the segment can be claimed again.
    mutating func release(_ id: Int) {
        busy.remove(id)
        requestedEnds[id] = nil
    }

    /// Forgets which segments are busy (no connection is running).
    mutating func releaseAll() {
        busy.removeAll()
        requestedEnds.removeAll()
    }

    /// Merges neighbouring finished, idle segments, so long downloads keep a short plan.
    mutating func compact() {
        var merged: [Segment] = []
        for segment in segments {
            if let last = merged.last, last.isDone, segment.isDone, !busy.contains(last.id), !busy.contains(segment.id),
                last.end == segment.start
            {
                merged[merged.count - 1].end = segment.end
                merged[merged.count - 1].written = segment.end - last.start
            } else {
                merged.append(segment)
            }
        }
        segments = merged
    }
}
