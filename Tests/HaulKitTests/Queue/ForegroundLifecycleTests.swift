import Testing

@testable import HaulKit

/// The life cycle of downloads that belong to a foreground command (`haul get`), and of completed downloads whose
/// file changed: each transition one line.
@Suite("Download lifecycle: owners and changed files")
struct ForegroundLifecycleTests {
    typealias Machine = DownloadLifecycle

    static func machine(owns: Bool = false, resumesStored: Bool = true) -> Machine {
        Machine(
            rules: .init(
                runsDownloads: true, resumesStoredDownloads: resumesStored, maxConcurrentDownloads: 2,
                ownsItsDownloads: owns))
    }

    @Test("another command's download: never run unless adopted; interrupted when its command is gone")
    func loadedFromAnotherCommand() {
        var machine = Self.machine()
        #expect(machine.load(1, recorded: .queued, priority: 0, claimedElsewhere: false, owner: .alive) == [])
        #expect(machine.phase(of: 1) == .queued && machine.runQueue.isEmpty, "its command may still run it")
        #expect(
            machine.load(2, recorded: .queued, priority: 0, claimedElsewhere: false, owner: .gone)
                == [.record([2], .interrupted)])
        #expect(
            machine.load(3, recorded: .running, priority: 0, claimedElsewhere: false, owner: .alive)
                == [.record([3], .interrupted)], "recorded running, claim free: its process died")
        #expect(machine.load(4, recorded: .running, priority: 0, claimedElsewhere: true, owner: .alive) == [])
        #expect(machine.phase(of: 4) == .runningElsewhere(recorded: .running))
        #expect(
            machine.load(5, recorded: .running, priority: 0, claimedElsewhere: false, owner: .queue)
                == [.record([5], .queued)], "the queue's: continued as before")
        #expect(machine.runQueue == [5])
        #expect(machine.schedule() == [.start(5)])
        #expect(machine.claimReleased(4, recorded: .running, priority: 0) == [.record([4], .interrupted)])
        #expect(machine.resume([2], claimedElsewhere: { _ in false }) == [.record([2], .queued)])
        #expect(machine.runQueue == [2], "resumed: the queue's now")
        #expect(machine.pause([3]) == [], "an interrupted download is not paused")
    }

    @Test("an owning manager's shutdown leaves its unfinished downloads interrupted, queued or running")
    func shutdownOfOwner() {
        var machine = Self.machine(owns: true, resumesStored: false)
        machine.add(1, priority: 0)
        machine.add(2, priority: 0)
        machine.add(3, priority: 0)
        #expect(machine.schedule() == [.start(1), .start(2)])
        #expect(machine.shutdown() == [.record([3], .interrupted), .stop(1, .shutdown), .stop(2, .shutdown)])
        #expect(machine.jobEnded(1, .stopped) == [.record([1], .interrupted)])
        #expect(machine.jobEnded(2, .completed(recorded: true)) == [.report(2)])
        var queue = Self.machine()
        queue.add(1, priority: 0)
        _ = queue.schedule()
        #expect(queue.shutdown() == [.stop(1, .shutdown)])
        #expect(queue.jobEnded(1, .stopped) == [], "the queue's: left running for the next owner")
    }

    @Test("a completed download whose file changed is queued again, or fails when its file is to be kept")
    func changedFile() {
        var machine = Self.machine()
        machine.add(1, priority: 0)
        _ = machine.schedule()
        _ = machine.jobEnded(1, .completed(recorded: true))
        // The owner writes queued with the transfer columns it resets, then reports it.
        #expect(machine.reopen(1) == [.report(1)])
        #expect(machine.runQueue == [1])
        #expect(machine.reopen(1) == [], "only a completed one")
        _ = machine.schedule()
        _ = machine.jobEnded(1, .completed(recorded: true))
        #expect(machine.fileRefused(1) == [.record([1], .failed)])
        #expect(machine.phase(of: 1) == .failed)
    }
}
