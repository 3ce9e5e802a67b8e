import Synchronization

/// The live plan of a multi-connection download: the ``SegmentPlanner`` and its ``SegmentJournal`` under one lock,
/// shared by the connections, the monitor (checkpoints) and the job.
///
/// Bytes a mirror writes are provisional until the primary has confirmed them (``SegmentedTransfer`` seals each range
/// a mirror served): the live plan counts them, so no other connection is given them, but the journal, the
/// checkpoints (``plan``) and the contiguous prefix never do. A range that fails its seal is rewound, and a crash
/// before the seal forgets it.
final class SegmentBoard: Sendable {
    private struct State: @unchecked Sendable {
        var planner: SegmentPlanner
        let journal: SegmentJournal
        let generation: Int64
        /// Segments restored from an earlier run whose first request re-checks the bytes before `next`.
        var unverified: Set<Int>
        var workers = 0
        /// Segments a mirror is writing, with the bytes of each that are trusted (written by the primary or sealed).
        var provisional: [Int: Int64] = [:]

        /// The plan with only trusted bytes counted.
        var trusted: SegmentPlanner {
            guard !provisional.isEmpty else { return planner }
            var plan = planner
            for (id, written) in provisional { plan.record(id, written: written) }
            return plan
        }

        func journalIndex(of id: Int) -> Int? { planner.segments.firstIndex { $0.id == id } }
    }

    private let state: Mutex<State>

    init(planner: SegmentPlanner, journal: SegmentJournal, generation: Int64, verifying: Set<Int> = []) {
        journal.write(planner.segments, generation: generation)
        state = Mutex(State(planner: planner, journal: journal, generation: generation, unverified: verifying))
    }

    /// Work for an idle connection, and whether its first bytes before `next` must be compared with the disk.
    func claim() -> (segment: Segment, verify: Bool)? {
        state.withLock { state in
            guard let segment = state.planner.claim() else { return nil }
            state.planner.compact()
            state.journal.write(state.trusted.segments, generation: state.generation)
            let verify = state.unverified.remove(segment.id) != nil
            return (segment, verify)
        }
    }

    /// Records that segment `id` is done up to `position`; returns how many more bytes it may write (its end can
    /// move closer when another connection takes over its second half).
    func record(_ id: Int, through position: Int64) -> Int64 {
        state.withLock { state in
            guard let index = state.planner.segments.firstIndex(where: { $0.id == id }) else { return 0 }
            let segment = state.planner.segments[index]
            state.planner.record(id, written: position - segment.start)
            if state.provisional[id] == nil {
                state.journal.record(index: index, written: state.planner.segments[index].written)
            }
            return state.planner.segments[index].end - position
        }
    }

    /// Records that segment `id`'s connection asked for bytes up to `end` (exclusive).
    func requesting(_ id: Int, through end: Int64) {
        state.withLock { $0.planner.requesting(id, through: end) }
    }

    func release(_ id: Int) {
        state.withLock { $0.planner.release(id) }
    }

    /// Counts connections at work; returns how many there are after the change.
    @discardableResult
    func workerChanged(by delta: Int) -> Int {
        state.withLock { state in
            state.workers += delta
            return state.workers
        }
    }

    /// The plan as far as it is trusted: what checkpoints record and the contiguous prefix is counted from (a
    /// mirror's unsealed bytes left out).
    var plan: SegmentPlanner { state.withLock { $0.trusted } }

    /// Whether every byte of the plan is written and trusted.
    var isComplete: Bool { state.withLock { $0.provisional.isEmpty && $0.planner.isComplete } }

    // MARK: - A mirror's provisional bytes

    /// Segment `id` is about to be written by a mirror: what it writes is provisional until ``seal(_:)``.
    func beginProvisional(_ id: Int) {
        state.withLock { state in
            guard state.provisional[id] == nil, let segment = state.planner.segment(id) else { return }
            state.provisional[id] = segment.written
        }
    }

    /// The bytes of segment `id` written provisionally (nil when it has none pending).
    func provisionalRange(_ id: Int) -> Range<Int64>? {
        state.withLock { state in
            guard let trusted = state.provisional[id], let segment = state.planner.segment(id) else { return nil }
            return (segment.start + trusted)..<segment.next
        }
    }

    /// The provisional bytes of segment `id` are confirmed: they count from now on (journal and checkpoints).
    func seal(_ id: Int) {
        state.withLock { state in
            guard state.provisional.removeValue(forKey: id) != nil, let index = state.journalIndex(of: id) else {
                return
            }
            state.journal.record(index: index, written: state.planner.segments[index].written)
        }
    }

    /// Forgets the provisional bytes of segment `id` (they failed their seal, or the mirror failed first); returns
    /// how many bytes were forgotten.
    @discardableResult
    func rewind(_ id: Int) -> Int64 {
        state.withLock { state in
            guard let trusted = state.provisional.removeValue(forKey: id), let segment = state.planner.segment(id)
            else { return 0 }
            state.planner.record(id, written: trusted)
            return max(0, segment.written - trusted)
        }
    }

    /// Up to `length` bytes already written to the part file and trusted (the longest trusted prefix of any
    /// segment), to compare a mirror's bytes with; nil while nothing is written.
    func writtenRange(length: Int64) -> Range<Int64>? {
        state.withLock { state in
            let trusted = state.trusted
            guard let longest = trusted.segments.max(by: { $0.written < $1.written }), longest.written > 0 else {
                return nil
            }
            return longest.start..<(longest.start + min(longest.written, length))
        }
    }

    func close() { state.withLock { $0.journal.close() } }
}
