import Testing

@testable import HaulKit

/// The queue's life cycle as a value: each transition one line, no database, no tasks.
@Suite("Download lifecycle")
struct DownloadLifecycleTests {
    typealias Machine = DownloadLifecycle

    static func machine(slots: Int = 2, runs: Bool = true, resumesStored: Bool = true) -> Machine {
        Machine(rules: .init(runsDownloads: runs, resumesStoredDownloads: resumesStored, maxConcurrentDownloads: slots))
    }

    /// A machine with `id` running here.
    static func running(_ id: DownloadID) -> Machine {
        var machine = machine()
        machine.add(id, priority: 0)
        _ = machine.schedule()
        return machine
    }

    static let free: @Sendable (DownloadID) -> Bool = { _ in false }
    static let held: @Sendable (DownloadID) -> Bool = { _ in true }

    @Test("added downloads start by priority, then first added, while slots are free")
    func scheduling() {
        var machine = Self.machine(slots: 2)
        machine.add(1, priority: 0)
        machine.add(2, priority: 5)
        machine.add(3, priority: 0)
        #expect(machine.runQueue == [2, 1, 3])
        #expect(machine.schedule() == [.start(2), .start(1)])
        #expect(machine.schedule() == [])
        #expect(machine.jobEnded(2, .completed(recorded: true)) == [.report(2)])
        #expect(machine.schedule() == [.start(3)])
        #expect(machine.runningHere == 2)
    }

    @Test("a download whose host is busy waits out of the run queue, frees its slot, and returns in its order")
    func hostBusy() {
        var machine = Self.machine(slots: 1)
        for id: DownloadID in [1, 2, 3] { machine.add(id, priority: 0) }
        #expect(machine.schedule() == [.start(1)])
        #expect(machine.hostBusy(1) == [])
        #expect(machine.phase(of: 1) == .queued)
        #expect(machine.runQueue == [2, 3] && machine.heldBackCount == 1 && machine.runningHere == 0)
        #expect(machine.schedule() == [.start(2)], "the slot went to the next download")
        #expect(machine.hostBusy(2) == [])
        #expect(machine.pause([1]) == [.record([1], .paused)], "a held-back download can still be paused")
        machine.releaseHeldBack()
        #expect(machine.runQueue == [2, 3] && machine.heldBackCount == 0, "1 was paused meanwhile: only 2 returns")
        #expect(machine.hostBusy(3) == [], "only a download starting here can be held back")
        // A host known busy: its downloads are held back by the scheduler itself, the slot goes to the next.
        machine.add(4, priority: 0)
        #expect(machine.schedule(holdingBack: { $0 == 2 || $0 == 3 }) == [.start(4)])
        #expect(machine.heldBackCount == 2 && machine.runQueue.isEmpty)
        _ = machine.jobEnded(4, .completed(recorded: true))
        machine.releaseHeldBack(count: 1)
        #expect(machine.runQueue == [2] && machine.heldBackCount == 1, "released one at a time, in order")
    }

    @Test(
        "a job finishing its part file gives its slot to the next download, up to four per slot; one needing it back goes first"
    )
    func finishingFreesSlot() {
        var machine = Self.machine(slots: 1)
        for id: DownloadID in [1, 2, 3, 4, 5, 6, 7] { machine.add(id, priority: 0) }
        #expect(machine.schedule() == [.start(1)])
        let oneGave = machine.finishingStarted(1, holding: nil)
        #expect(oneGave)
        #expect(machine.slotsInUse == 0 && machine.runningHere == 1)
        #expect(machine.phase(of: 1) == .runningHere(stopping: nil), "still running until its file is in place")
        #expect(machine.schedule() == [.start(2)])
        for id: DownloadID in [2, 3, 4] {
            let gave = machine.finishingStarted(id, holding: nil)
            #expect(gave)
            #expect(machine.schedule() == [.start(DownloadID(rawValue: id.rawValue + 1))])
        }
        #expect(machine.finishingHere.count == machine.finishingFileLimit, "four per slot")
        let fiveGave = machine.finishingStarted(5, holding: nil)
        #expect(!fiveGave, "the limit is reached: 5 keeps its slot")
        #expect(machine.schedule() == [])
        #expect(machine.jobEnded(1, .completed(recorded: true)) == [.report(1)])
        #expect(machine.schedule() == [], "a finishing job held no slot: its end frees none")
        // 2's finishing failed and it tries again: it needs a connection, and the slot is 5's.
        let twoHas = machine.slotNeeded(2)
        #expect(!twoHas)
        #expect(machine.jobEnded(5, .failed) == [.record([5], .failed)])
        #expect(machine.schedule() == [.grantSlot(2)], "served before the queued 6")
        let twoHasNow = machine.slotNeeded(2)
        #expect(twoHasNow, "it has its slot")
        #expect(machine.slotsInUse == 1 && machine.runQueue == [6, 7])
        // 3 needs one again too, but is paused while it waits: it does not wait for a slot it will not use.
        let threeHas = machine.slotNeeded(3)
        #expect(!threeHas)
        #expect(machine.pause([3]) == [.stop(3, .pause)])
        let threeStopping = machine.slotNeeded(3)
        #expect(threeStopping)
        #expect(machine.jobEnded(3, .stopped) == [.record([3], .paused)])
        #expect(machine.jobEnded(2, .completed(recorded: true)) == [.report(2)])
        #expect(machine.schedule() == [.start(6)], "3 left the waiting line when it stopped")
        let sixGave = machine.finishingStarted(6, holding: nil)
        let fourHas = machine.slotNeeded(4)
        #expect(sixGave && fourHas)
        #expect(machine.finishingHere == [6], "a free slot is taken back at once")
        #expect(Self.machine(slots: 100).finishingFileLimit == 64, "at most 64 finishing without a slot")
    }

    @Test(
        "jobs finishing small bodies held in memory give their slots up to sixteen per slot, 256 in all and 16 MiB together, beside those with part files"
    )
    func finishingHeldBodies() {
        var machine = Self.machine(slots: 1)
        for raw in 1...40 { machine.add(DownloadID(rawValue: Int64(raw)), priority: 0) }
        var gave: [Bool] = []
        // Each starts in the slot the one before gave, and finishes a 4 KiB body held in memory.
        for raw in 1...17 {
            let id = DownloadID(rawValue: Int64(raw))
            #expect(machine.schedule() == [.start(id)])
            gave.append(machine.finishingStarted(id, holding: 4096))
        }
        #expect(gave == Array(repeating: true, count: 16) + [false], "sixteen per slot; the 17th keeps its slot")
        #expect(machine.finishingHeldBytes == 16 * 4096)
        #expect(machine.schedule() == [])
        // Once the 17th ends, the next one finishes a part file: those have a limit of their own.
        #expect(machine.jobEnded(17, .completed(recorded: true)) == [.report(17)])
        #expect(machine.schedule() == [.start(18)])
        let fileGave = machine.finishingStarted(18, holding: nil)
        #expect(fileGave, "a part file's limit is its own")
        #expect(machine.finishingHere.count == 17 && machine.finishingHeldBytes == 16 * 4096)
        // A finished body's bytes are given back when its job ends.
        #expect(machine.jobEnded(1, .completed(recorded: true)) == [.report(1)])
        #expect(machine.finishingHeldBytes == 15 * 4096)
        #expect(machine.schedule() == [.start(19)])
        let nineteenGave = machine.finishingStarted(19, holding: 4096)
        #expect(nineteenGave && machine.finishingHeldBytes == 16 * 4096)
        // One whose finishing failed takes a free slot back; its body is no longer held.
        let twoHas = machine.slotNeeded(2)
        #expect(twoHas && machine.finishingHeldBytes == 15 * 4096)

        // The bytes bound it too: 64 bodies of 256 KiB are 16 MiB.
        var large = Self.machine(slots: 100)
        for raw in 1...100 { large.add(DownloadID(rawValue: Int64(raw)), priority: 0) }
        _ = large.schedule()
        var given = 0
        for raw in 1...100 where large.finishingStarted(DownloadID(rawValue: Int64(raw)), holding: 256 * 1024) {
            given += 1
        }
        #expect(given == 64, "16 MiB of held bodies at most")
        #expect(large.finishingHeldBytes == DownloadLifecycle.finishingHeldByteLimit)
        #expect(Self.machine(slots: 100).finishingHeldLimit == 256, "at most 256 held bodies finishing without a slot")
    }

    @Test("pause: a job here is stopped, a queued download is recorded paused, others are left alone")
    func pause() {
        var machine = Self.running(1)
        machine.add(2, priority: 0)
        #expect(machine.pause([1, 2]) == [.record([2], .paused), .stop(1, .pause)])
        #expect(machine.phase(of: 1) == .runningHere(stopping: .pause))
        #expect(machine.jobEnded(1, .stopped) == [.record([1], .paused)])
        #expect(machine.pause([1, 2]) == [])
    }

    @Test("resume queues paused and failed downloads; running and completed ones are not touched")
    func resume() {
        var machine = Self.running(1)
        #expect(machine.resume([1], claimedElsewhere: Self.free) == [])
        #expect(machine.jobEnded(1, .failed) == [.record([1], .failed)])
        #expect(machine.resume([1], claimedElsewhere: Self.free) == [.record([1], .queued)])
        #expect(machine.runQueue == [1])
        _ = machine.schedule()
        #expect(machine.jobEnded(1, .completed(recorded: false)) == [.record([1], .completed)])
        #expect(machine.resume([1], claimedElsewhere: Self.free) == [])
        #expect(machine.phase(of: 1) == .completed)
    }

    @Test("events that do not apply change nothing: no illegal transition")
    func illegal() {
        var machine = Self.machine()
        machine.add(1, priority: 0)
        #expect(machine.jobEnded(1, .completed(recorded: true)) == [])
        #expect(machine.claimFailed(1, recorded: .running) == [])
        #expect(machine.claimReleased(1, recorded: .running, priority: 0) == [])
        #expect(machine.jobEnded(99, .failed) == [])
        #expect(machine.pause([99]) == [])
        #expect(machine.phase(of: 1) == .queued)
    }

    @Test("remove: idle downloads are forgotten at once, a running one after its job stops")
    func remove() {
        var machine = Self.running(1)
        machine.add(2, priority: 0)
        #expect(
            machine.remove([1, 2], deletingFiles: true) == [
                .forget([2], deletingFiles: true), .stop(1, .remove(deletingFile: true)),
            ])
        #expect(machine.jobEnded(1, .stopped) == [.forget([1], deletingFiles: true)])
        #expect(machine.entries.count(in: .running) == 1, "running here until it is forgotten")
        machine.forgotten([1, 2])
        #expect(machine.entries.isEmpty)
        #expect(machine.runningHere == 0)
    }

    @Test("a download that completes just as it is removed keeps its file unless asked")
    func completedWhileRemoved() {
        var machine = Self.running(1)
        _ = machine.remove([1], deletingFiles: false)
        #expect(machine.jobEnded(1, .completed(recorded: true)) == [.forget([1], deletingFiles: false)])
        #expect(machine.phase(of: 1) == .completed)
        #expect(machine.removalFailed(1) == [], "a completed download stays completed")
    }

    @Test("a removal whose file cannot be deleted leaves the download paused, to be removed again")
    func removalFailed() {
        var machine = Self.running(1)
        _ = machine.remove([1], deletingFiles: false)
        _ = machine.jobEnded(1, .stopped)
        #expect(machine.removalFailed(1) == [.record([1], .paused)])
        #expect(machine.phase(of: 1) == .paused)
        #expect(machine.runningHere == 0)
    }

    @Test("start-up: running with a live owner is followed; running without one is queued to continue")
    func load() {
        var machine = Self.machine()
        #expect(machine.load(1, recorded: .running, priority: 0, claimedElsewhere: true) == [])
        #expect(machine.load(2, recorded: .running, priority: 0, claimedElsewhere: false) == [.record([2], .queued)])
        #expect(machine.load(3, recorded: .paused, priority: 0, claimedElsewhere: false) == [])
        #expect(machine.phase(of: 1) == .runningElsewhere(recorded: .running))
        #expect(machine.watchedElsewhere == [1])
        #expect(machine.runQueue == [2])
    }

    @Test(
        "start-up: a stored queue runs by priority, only where this manager runs it; loading one again takes its state")
    func loadQueue() {
        var machine = Self.machine()
        _ = machine.load(1, recorded: .queued, priority: 0, claimedElsewhere: false)
        _ = machine.load(2, recorded: .queued, priority: 5, claimedElsewhere: false)
        _ = machine.load(3, recorded: .failed, priority: 9, claimedElsewhere: false)
        _ = machine.load(4, recorded: .running, priority: 1, claimedElsewhere: false)
        #expect(machine.runQueue == [2, 4, 1])
        #expect(machine.phase(of: 3) == .failed)
        _ = machine.load(1, recorded: .paused, priority: 0, claimedElsewhere: false)
        #expect(machine.runQueue == [2, 4])
        #expect(machine.phase(of: 1) == .paused)

        for rules in [Self.machine(runs: false), Self.machine(resumesStored: false)] {
            var other = rules
            _ = other.load(1, recorded: .queued, priority: 0, claimedElsewhere: false)
            #expect(other.runQueue == [])
            #expect(other.phase(of: 1) == .queued)
        }
    }

    @Test("a manager that holds stored downloads back runs only what was added or resumed through it")
    func heldBack() {
        var machine = Self.machine(resumesStored: false)
        _ = machine.load(1, recorded: .queued, priority: 0, claimedElsewhere: false)
        machine.add(2, priority: 0)
        #expect(machine.runQueue == [2])
        #expect(machine.resume([1], claimedElsewhere: Self.free) == [])
        #expect(machine.runQueue == [1, 2])
    }

    @Test("a manager that does not run downloads never starts one")
    func listOnly() {
        var machine = Self.machine(runs: false)
        machine.add(1, priority: 0)
        #expect(machine.schedule() == [])
        #expect(machine.pause([1]) == [.record([1], .paused)])
    }

    @Test("a claim held elsewhere: followed, then taken over when released")
    func claims() {
        var machine = Self.machine()
        machine.add(1, priority: 0)
        #expect(machine.schedule() == [.start(1)])
        #expect(machine.claimFailed(1, recorded: .running) == [.report(1)])
        #expect(machine.runningHere == 0)
        #expect(machine.resume([1], claimedElsewhere: Self.held) == [])
        #expect(machine.claimReleased(1, recorded: .running, priority: 0) == [.record([1], .queued)])
        #expect(machine.schedule() == [.start(1)])
    }

    @Test("a claim released by an owner that finished: its recorded state is taken, nothing is run")
    func releasedFinished() {
        var machine = Self.machine()
        _ = machine.load(1, recorded: .running, priority: 0, claimedElsewhere: true)
        #expect(machine.claimReleased(1, recorded: .completed, priority: 0) == [.report(1)])
        #expect(machine.claimReleased(1, recorded: .running, priority: 0) == [])
        #expect(machine.phase(of: 1) == .completed)
    }

    @Test("changes from other processes: a pause stops the job here, other states are taken as recorded")
    func external() {
        var machine = Self.running(1)
        #expect(machine.recorded(1, .paused, priority: 0) == [.stop(1, .pause)])
        #expect(machine.recorded(1, .queued, priority: 0) == [])
        #expect(machine.recorded(2, .queued, priority: 0) == [])
        #expect(machine.runQueue == [2])
        #expect(machine.recorded(2, .running, priority: 0) == [.report(2)])
        #expect(machine.runQueue == [])
        #expect(machine.vanished(2) == [.drop(2)])
        #expect(machine.vanished(1) == [.stop(1, .remove(deletingFile: false))])
    }

    @Test("shutdown stops every job without pausing it and starts nothing more")
    func shutdown() {
        var machine = Self.running(1)
        machine.add(2, priority: 0)
        #expect(machine.shutdown() == [.stop(1, .shutdown)])
        #expect(machine.jobEnded(1, .stopped) == [])
        #expect(machine.phase(of: 1) == .runningElsewhere(recorded: .running))
        #expect(machine.schedule() == [])
        #expect(machine.shutdown() == [])
    }
}
