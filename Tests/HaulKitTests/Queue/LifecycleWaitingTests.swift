import Testing

@testable import HaulKit

/// The life cycle's waits that hold no slot (room on the file system) and its hold (a pause schedule), one
/// transition a line.
@Suite("Download lifecycle: waiting for space, held by a schedule")
struct LifecycleWaitingTests {
    typealias Machine = DownloadLifecycle

    @Test("a download waiting for space gives its slot to the next; it gets one back first when there is room")
    func spaceWait() {
        var machine = DownloadLifecycleTests.machine(slots: 1)
        machine.add(1, priority: 0)
        machine.add(2, priority: 0)
        machine.add(3, priority: 0)
        #expect(machine.schedule() == [.start(1)])
        #expect(machine.spaceRanOut(1) == true)
        #expect(machine.spaceRanOut(1) == false, "once")
        #expect(machine.phase(of: 1) == .runningHere(stopping: nil), "still running: it shows why it waits")
        #expect(machine.schedule() == [.start(2)])
        // Room again, but the slot is taken: it waits for it, before any queued download.
        #expect(machine.slotNeeded(1) == false)
        #expect(machine.jobEnded(2, .completed(recorded: true)) == [.report(2)])
        #expect(machine.schedule() == [.grantSlot(1)])
        #expect(machine.slotsInUse == 1)
        #expect(machine.runQueue == [3])
    }

    @Test("a download that ends while it waits for space holds no slot any more; a stopping one gives none")
    func spaceWaitEnds() {
        var machine = DownloadLifecycleTests.machine(slots: 1)
        machine.add(1, priority: 0)
        _ = machine.schedule()
        #expect(machine.spaceRanOut(1) == true)
        #expect(machine.pause([1]) == [.stop(1, .pause)])
        #expect(machine.jobEnded(1, .stopped) == [.record([1], .paused)])
        #expect(machine.slotsInUse == 0)
        #expect(machine.runningHere == 0)
        machine.add(2, priority: 0)
        _ = machine.schedule()
        _ = machine.pause([2])
        #expect(machine.spaceRanOut(2) == false, "it is stopping")
        #expect(machine.slotNeeded(2) == true, "a stopping job never waits for a slot")
    }

    @Test("a hold stops what runs and sends it back to the queue; nothing starts until released")
    func hold() {
        var machine = DownloadLifecycleTests.machine(slots: 2)
        machine.add(1, priority: 0)
        machine.add(2, priority: 0)
        machine.add(3, priority: 0)
        #expect(machine.schedule() == [.start(1), .start(2)])
        #expect(machine.hold() == [.stop(1, .hold), .stop(2, .hold)])
        #expect(machine.hold() == [], "once")
        #expect(machine.jobEnded(1, .stopped) == [.record([1], .queued)])
        #expect(machine.jobEnded(2, .completed(recorded: true)) == [.report(2)], "one that completed meanwhile")
        #expect(machine.schedule() == [])
        machine.add(4, priority: 0)
        #expect(machine.schedule() == [])
        #expect(machine.phase(of: 1) == .queued)
        machine.release()
        #expect(machine.schedule() == [.start(1), .start(3)])
    }

    @Test("a download paused by hand during a hold stays paused after it")
    func pausedDuringHold() {
        var machine = DownloadLifecycleTests.machine(slots: 1)
        machine.add(1, priority: 0)
        _ = machine.schedule()
        _ = machine.hold()
        // Paused by hand while the hold stops it: the pause wins.
        #expect(machine.pause([1]) == [.stop(1, .pause)])
        #expect(machine.jobEnded(1, .stopped) == [.record([1], .paused)])
        machine.release()
        #expect(machine.schedule() == [])
        #expect(machine.phase(of: 1) == .paused)
    }
}
