import Testing

@testable import HaulKit

/// ``LifecycleEntries``: the counts by state it keeps are those a scan of its entries finds.
@Suite("The lifecycle's entries and their counts by state")
struct LifecycleEntriesTests {
    typealias Phase = DownloadLifecycle.Phase

    static let phases: [Phase] = [
        .queued, .runningHere(stopping: nil), .runningElsewhere(recorded: .running),
        .runningElsewhere(recorded: .completed), .paused, .completed, .failed, .interrupted,
    ]

    static func scanned(_ entries: LifecycleEntries, _ state: DownloadState) -> Int {
        entries.reduce(0) { $1.value.phase.state == state ? $0 + 1 : $0 }
    }

    @Test("added, changed in place, replaced and removed entries are counted as a scan counts them")
    func counts() {
        var entries = LifecycleEntries()
        let a = DownloadID(rawValue: 1)
        let b = DownloadID(rawValue: 2)
        entries[a] = .init(phase: .queued, priority: 0, adopted: true)
        entries[b] = .init(phase: .queued, priority: 0, adopted: true)
        #expect(entries.count(in: .queued) == 2)
        entries[a]?.phase = .runningHere(stopping: nil)
        #expect(entries.count(in: .queued) == 1 && entries.count(in: .running) == 1)
        entries[b] = .init(phase: .runningElsewhere(recorded: .completed), priority: 3, adopted: false)
        #expect(entries.count(in: .queued) == 0 && entries.count(in: .completed) == 1)
        entries[a] = nil
        entries[a] = nil
        #expect(entries.count(in: .running) == 0 && entries.count(in: .completed) == 1)
        entries[DownloadID(rawValue: 9)]?.phase = .failed
        #expect(entries.count(in: .failed) == 0, "changing a missing entry adds none")
        #expect(Array(entries).count == 1 && !entries.isEmpty)
    }

    @Test("after 5,000 random changes the counts of every state are a scan's")
    func randomChanges() {
        var entries = LifecycleEntries()
        var generator = SplitMix(seed: 47)
        for _ in 0..<5_000 {
            let id = DownloadID(rawValue: Int64(generator.next() % 200))
            let phase = Self.phases[Int(generator.next() % UInt64(Self.phases.count))]
            switch generator.next() % 3 {
            case 0: entries[id] = .init(phase: phase, priority: 0, adopted: false)
            case 1: entries[id]?.phase = phase
            default: entries[id] = nil
            }
        }
        for state in DownloadState.allCases {
            #expect(entries.count(in: state) == Self.scanned(entries, state), "\(state)")
        }
        #expect(DownloadState.allCases.reduce(0) { $0 + entries.count(in: $1) } == Array(entries).count)
    }
}
