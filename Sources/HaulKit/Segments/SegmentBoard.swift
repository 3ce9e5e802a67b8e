import Synchronization

/// The live plan of a multi-connection download: the ``SegmentPlanner`` and its ``SegmentJournal`` under one lock,
/// shared by the connections, the monitor (checkpoints) and the job.
final class SegmentBoard: Sendable {
    private struct State: @unchecked Sendable {
        var planner: SegmentPlanner
        let journal: SegmentJournal
        let generation: Int64
        /// Segments restored from an earlier run whose first request re-checks the bytes before `next`.
        var unverified: Set<Int>
        var workers = 0
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
            state.journal.write(state.planner.segments, generation: state.generation)
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
            state.journal.record(index: index, written: state.planner.segments[index].written)
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

    var plan: SegmentPlanner { state.withLock { $0.planner } }

    /// Up to `length` bytes already written to the part file (the longest written prefix of any segment), to compare
    /// a mirror's bytes with; nil while nothing is written.
    func writtenRange(length: Int64) -> Range<Int64>? {
        state.withLock { state in
            guard let longest = state.planner.segments.max(by: { $0.written < $1.written }), longest.written > 0 else {
                return nil
            }
            return longest.start..<(longest.start + min(longest.written, length))
        }
    }

    func close() { state.withLock { $0.journal.close() } }
}
