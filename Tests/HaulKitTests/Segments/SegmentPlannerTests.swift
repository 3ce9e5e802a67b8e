import Testing

@testable import HaulKit

@Suite("Segment planning")
struct SegmentPlannerTests {
    static let mib: Int64 = 1 << 20

    /// A 32 MiB plan for two connections (1 MiB minimum) with both first segments claimed.
    static func twoConnections() throws -> (SegmentPlanner, Segment, Segment) {
        var planner = SegmentPlanner(total: 32 * mib, done: 0, connections: 2, minimumSize: mib)
        let first = planner.claim()
        let second = planner.claim()
        return (planner, try #require(first), try #require(second))
    }

    @Test(
        "initial plans: equal parts, never below the minimum, the done prefix kept",
        arguments: [
            (Int64(10) << 20, Int64(0), 4, [0, 2_621_440, 5_242_880, 7_864_320]),
            (Int64(10) << 20 + 3, Int64(0), 4, [0, 2_621_440, 5_242_880, 7_864_320]),
            (Int64(3) << 20, Int64(0), 8, [0, 1_048_576, 2_097_152]),
            (Int64(500_000), Int64(0), 8, [0]),
            (Int64(4) << 20, Int64(1) << 20, 2, [0, 1_048_576, 2_621_440]),
        ] as [(Int64, Int64, Int, [Int64])])
    func initialPlans(_ total: Int64, _ done: Int64, _ connections: Int, _ starts: [Int64]) {
        let planner = SegmentPlanner(total: total, done: done, connections: connections, minimumSize: Self.mib)
        #expect(planner.segments.map(\.start) == starts)
        #expect(planner.segments.last?.end == total)
        #expect(planner.receivedBytes == done)
        #expect(planner.contiguousBytes == done)
    }

    @Test("an idle connection takes the second half of the largest remaining segment")
    func stealsHalf() throws {
        let (claimed, a, b) = try Self.twoConnections()
        var planner = claimed
        planner.record(a.id, written: 16 * Self.mib)  // a is done
        planner.release(a.id)
        planner.record(b.id, written: 4 * Self.mib)
        let claimedTaken = planner.claim()
        let taken = try #require(claimedTaken)
        #expect(taken.start == 26 * Self.mib)  // b is at 20 MiB with 12 MiB left
        #expect(taken.end == 32 * Self.mib)
        #expect(planner.segment(b.id)?.end == taken.start)
        // Less than 8 minimum sizes left in each: cutting a running request would waste what is in flight.
        planner.record(b.id, written: 3 * Self.mib)
        #expect(planner.claim() == nil)
    }

    @Test("a split takes the tail beyond a running request, so no connection is cut short")
    func takesUnrequestedTail() throws {
        let (claimed, a, b) = try Self.twoConnections()
        var planner = claimed
        planner.requesting(b.id, through: 31 * Self.mib)
        planner.record(a.id, written: 16 * Self.mib)  // a is done
        planner.release(a.id)
        planner.record(b.id, written: Self.mib)
        // b is at 17 MiB, asked up to 31: the free tail (1 MiB) is less than half of what cutting b at 24.5 MiB
        // gives (7.5 MiB), and 15 MiB are left, so b is cut.
        let claimedCut = planner.claim()
        let cut = try #require(claimedCut)
        #expect(cut.start == 24 * Self.mib + Self.mib / 2)

        let (claimedAgain, c, d) = try Self.twoConnections()
        var second = claimedAgain
        second.requesting(d.id, through: 26 * Self.mib)
        second.record(c.id, written: 16 * Self.mib)
        second.release(c.id)
        second.record(d.id, written: Self.mib)
        // d is at 17 MiB, asked up to 26: the free tail (6 MiB) is taken; d's request runs to its end.
        let claimedFree = second.claim()
        let free = try #require(claimedFree)
        #expect(free.start == 26 * Self.mib)
        #expect(second.segment(d.id)?.end == 26 * Self.mib)
    }

    @Test("contiguous bytes stop at the first gap")
    func contiguous() {
        var planner = SegmentPlanner(total: 4 * Self.mib, done: 0, connections: 4, minimumSize: Self.mib)
        planner.record(1, written: Self.mib)
        #expect(planner.contiguousBytes == 0)
        planner.record(0, written: Self.mib)
        #expect(planner.contiguousBytes == 2 * Self.mib)
        planner.record(2, written: 10)
        #expect(planner.contiguousBytes == 2 * Self.mib + 10)
    }

    @Test("restoring rejects plans that do not cover the file exactly")
    func restoring() {
        let good = [Segment(id: 0, start: 0, end: 10, written: 10), Segment(id: 3, start: 10, end: 20, written: 4)]
        #expect(SegmentPlanner(restoring: good, total: 20, minimumSize: 1)?.receivedBytes == 14)
        #expect(SegmentPlanner(restoring: good, total: 21, minimumSize: 1) == nil)
        let gap = [Segment(id: 0, start: 0, end: 10, written: 10), Segment(id: 1, start: 11, end: 20, written: 0)]
        #expect(SegmentPlanner(restoring: gap, total: 20, minimumSize: 1) == nil)
        let overdone = [Segment(id: 0, start: 0, end: 10, written: 11)]
        #expect(SegmentPlanner(restoring: overdone, total: 10, minimumSize: 1) == nil)
    }

    @Test("property: under any schedule, every byte is fetched exactly once", arguments: 0..<50)
    func everyByteOnce(_ seed: Int) throws {
        var random = SplitMix(seed: UInt64(seed))
        let total = Int64(random.next(upTo: 40_000_000)) + 1
        let minimum = Int64(random.next(upTo: 2_000_000)) + 1
        let connections = Int(random.next(upTo: 16)) + 1
        var planner = SegmentPlanner(total: total, done: 0, connections: connections, minimumSize: minimum)
        var fetched: [(Int64, Int64)] = []  // ranges written, as connections would write them
        var active: [Int] = []
        var steps = 0
        while !planner.isComplete {
            steps += 1
            if steps > 100_000 {
                Issue.record("no progress")
                return
            }
            while active.count < connections, let segment = planner.claim() {
                active.append(segment.id)
                // Connections ask for bounded ranges, or (sometimes) for the whole rest.
                if random.next(upTo: 3) > 0 {
                    planner.requesting(
                        segment.id, through: min(segment.end, segment.next + Int64(random.next(upTo: 8_000_000)) + 1))
                }
            }
            guard !active.isEmpty else {
                Issue.record("work left but nothing claimable")
                return
            }
            let pick = Int(random.next(upTo: UInt64(active.count)))
            let id = active[pick]
            let segment = try #require(planner.segment(id))
            let step = min(segment.remaining, Int64(random.next(upTo: 3_000_000)) + 1)
            if step > 0 { fetched.append((segment.next, segment.next + step)) }
            planner.record(id, written: segment.written + step)
            if planner.segment(id)?.isDone == true || random.next(upTo: 20) == 0 {
                planner.release(id)
                active.remove(at: pick)
            }
        }
        fetched.sort { $0.0 < $1.0 }
        var position: Int64 = 0
        for (start, end) in fetched {
            #expect(start == position, "gap or overlap at \(position)")
            position = end
        }
        #expect(position == total)
        #expect(planner.receivedBytes == total)
        #expect(planner.contiguousBytes == total)
    }
}

/// A small deterministic random generator for property tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(upTo bound: UInt64) -> UInt64 { next() % max(1, bound) }
}
