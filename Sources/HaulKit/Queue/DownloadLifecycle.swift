/// The life cycle of every download a manager knows, as a value: one entry per download, events in, actions out.
///
/// Pure: no I/O, no clock, no tasks. ``DownloadManager`` feeds it what happened (a call, a job's end, a change
/// another process recorded) and performs the actions it returns (record a state, start or stop a job, forget a
/// download). An event that does not apply to a download's phase changes nothing and returns no action, so an
/// illegal transition (resuming a running download, pausing a completed one) cannot happen. The run queue and the
/// count of running jobs are kept here, in step with the phases, by one private function.
///
/// See `docs/state-machine.md` for the diagram and the table of transitions.
struct DownloadLifecycle: Sendable {
    /// Why a running job is stopped.
    enum StopReason: Equatable, Sendable {
        case pause
        case remove(deletingFile: Bool)
        case shutdown
        /// The store says another worker holds the download now (a shared queue's lease ran out).
        case claimLost
        /// Downloads are held (a pause schedule, ``hold()``): back to the queue until they are released.
        case hold
    }

    /// How a job ended.
    enum Ending: Equatable, Sendable {
        /// The file is in place; `recorded` when the finishing queue already recorded the download completed.
        case completed(recorded: Bool)
        case failed
        /// Cancelled; the partial data is checkpointed.
        case stopped
    }

    /// What the manager does for an event, in order.
    enum Action: Equatable, Sendable {
        /// Record these downloads in `state` (one transaction) and report their status.
        case record([DownloadID], DownloadState)
        /// Report the download's status, already recorded (by the finishing queue, or by another process).
        case report(DownloadID)
        /// Claim the download and start its job (``DownloadLifecycle/claimFailed(_:recorded:)`` if the claim fails).
        case start(DownloadID)
        /// Stop the download's job and wait for it; its end comes back as ``DownloadLifecycle/jobEnded(_:_:)``.
        case stop(DownloadID, StopReason)
        /// Delete the downloads' partial data (and completed files if asked) and their records; report what went
        /// with ``DownloadLifecycle/forgotten(_:)``.
        case forget([DownloadID], deletingFiles: Bool)
        /// Another process deleted the record: drop it from memory and report it removed.
        case drop(DownloadID)
        /// The job, which gave its slot back to finish its file, has one again: it may connect (see
        /// ``DownloadLifecycle/slotNeeded(_:)``).
        case grantSlot(DownloadID)
    }

    /// What the manager is for.
    struct Rules: Sendable {
        /// False for a manager that only lists and edits (`haul list`, `haul pause`).
        var runsDownloads: Bool
        /// Whether it runs every stored download, or only those added or resumed through it.
        var resumesStoredDownloads: Bool
        var maxConcurrentDownloads: Int
        /// Whether the downloads added or resumed through it are its own, as a foreground command's: those it leaves
        /// unfinished when it shuts down become ``Phase/interrupted``.
        var ownsItsDownloads = false
    }

    struct Entry: Equatable, Sendable {
        var phase: Phase
        /// The download's priority option: its place in the run queue whenever it is queued.
        var priority: Int
        /// Added or resumed through this manager: it runs it even when it holds stored downloads back.
        var adopted: Bool
        /// Owned by another foreground command (its record names another owner): never run here unless adopted.
        var ownedElsewhere = false
    }

    private(set) var rules: Rules
    private(set) var entries = LifecycleEntries()
    private var queue = DownloadQueue()
    /// Queued downloads kept out of the run queue until ``releaseHeldBack(count:)``: their host had no connection left.
    private(set) var heldBack = DownloadQueue()
    /// Jobs running (or being started) here.
    private(set) var runningHere = 0
    /// Jobs here that gave their slot back while their complete file is finished (synced, put in place and recorded):
    /// they use no connection, so the slot goes to the next queued download. See ``finishingStarted(_:holding:)``.
    private(set) var finishingHere: Set<DownloadID> = []
    /// The bytes each of them holds in memory, for a small body not on disk yet (one with an open part file is not
    /// here), and their sum.
    private var finishingHeld: [DownloadID: Int64] = [:]
    private(set) var finishingHeldBytes: Int64 = 0
    /// Jobs here that wait for room on their file system: their slot goes to the next queued download (maybe for
    /// another file system) until they have room again (``spaceRanOut(_:)``, which writes it with the slot counts).
    var waitingForSpace: Set<DownloadID> = []
    /// Jobs among them that need a connection again (their finishing failed and they try again), first come first
    /// served, before any queued download starts.
    private var reclaiming: [DownloadID] = []
    private(set) var isShutDown = false
    /// While true nothing starts (``hold()``, a pause schedule).
    var isHeld = false

    init(rules: Rules) { self.rules = rules }

    func phase(of id: DownloadID) -> Phase? { entries[id]?.phase }

    /// The next `count` queued downloads ``schedule(holdingBack:)`` would start, in order (none taken).
    func nextQueued(_ count: Int) -> [DownloadID] { queue.prefix(count) }

    /// Makes room for `count` downloads at once (a queue loaded at start grows its table once).
    mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

    /// The queued downloads this manager runs, in the order they start.
    var runQueue: [DownloadID] { queue.ids }

    /// Whether this manager runs `id` when it is queued.
    func wouldRun(_ id: DownloadID) -> Bool {
        guard let entry = entries[id] else { return false }
        return rules.runsDownloads && (entry.adopted || (rules.resumesStoredDownloads && !entry.ownedElsewhere))
    }

    /// Slots taken: jobs here, less those finishing without one.
    var slotsInUse: Int { runningHere - finishingHere.count - waitingForSpace.count }

    /// How many jobs with an open part file may finish it without a slot: four per slot, at most 64 (each keeps its
    /// file open).
    var finishingFileLimit: Int { min(4 * rules.maxConcurrentDownloads, 64) }

    /// How many jobs with a small body held in memory may finish it without a slot: sixteen per slot, at most 256,
    /// together holding at most ``finishingHeldByteLimit`` (at four per slot the fetching waited for the flushes:
    /// `bench/RESULTS.md`).
    var finishingHeldLimit: Int { min(16 * rules.maxConcurrentDownloads, 256) }

    /// The bytes that jobs finishing without a slot may hold in memory together: 16 MiB, as many as 64 of the largest
    /// held bodies.
    static let finishingHeldByteLimit: Int64 = 16 << 20

    /// How many queued downloads wait for a connection to their host.
    var heldBackCount: Int { heldBack.count }

    /// The first `count` downloads of the run queue, in the order they would start.
    func queued(first count: Int) -> [DownloadID] { queue.prefix(count) }

    /// Whether any download waits in the run queue.
    var anyQueued: Bool { !queue.isEmpty }

    // MARK: - Events

    /// A download read from the store at start-up. One recorded `running` whose claim nobody holds was left by a
    /// process that stopped without pausing it: it is queued to continue, unless it belongs to a foreground command
    /// (`owner`), which then died: it is interrupted, as is a queued one whose command is gone.
    mutating func load(
        _ id: DownloadID, recorded state: DownloadState, priority: Int, claimedElsewhere: Bool,
        owner: Ownership = .queue
    )
        -> [Action]
    {
        let phase: Phase
        var actions: [Action] = []
        let abandoned = state == .running ? !claimedElsewhere : state == .queued && owner == .gone
        if !abandoned {
            phase = Phase(recorded: state)
        } else if owner == .queue {
            phase = .queued
            actions = [.record([id], .queued)]
        } else {
            phase = .interrupted
            actions = [.record([id], .interrupted)]
        }
        let entry = Entry(phase: phase, priority: priority, adopted: false, ownedElsewhere: owner != .queue)
        guard entries[id] == nil else {
            entries[id] = Entry(phase: .paused, priority: priority, adopted: false, ownedElsewhere: owner != .queue)
            set(id, phase)
            return actions
        }
        // Not known here yet (as at start-up): it runs, finishes and waits for a host nowhere, so only the run queue
        // may need it. Taking it through `set` was 8.5% of the start-up with 100,000 downloads.
        entries[id] = entry
        if phase == .queued, wouldRun(id) { queue.insert(id, priority: priority) }
        return actions
    }

    /// Whose a download is, as its record says.
    enum Ownership: Equatable, Sendable {
        /// The queue's: any manager that runs stored downloads may run it.
        case queue
        /// Another foreground command's, which is running (or cannot be told dead).
        case alive
        /// Another foreground command's, which has ended.
        case gone
    }

    /// A download just added (and recorded `queued`) through this manager.
    mutating func add(_ id: DownloadID, priority: Int, paused: Bool = false) {
        entries[id] = Entry(phase: .paused, priority: priority, adopted: true)
        set(id, paused ? .paused : .queued)
    }

    /// Pauses: a job here is stopped; a download queued, or running elsewhere, is recorded paused (its owner sees
    /// the change and stops).
    mutating func pause(_ ids: [DownloadID]) -> [Action] {
        var recorded: [DownloadID] = []
        var stops: [Action] = []
        for id in ids {
            switch entries[id]?.phase {
            case .runningHere:
                set(id, .runningHere(stopping: .pause))
                stops.append(.stop(id, .pause))
            case .queued, .runningElsewhere:
                set(id, .paused)
                recorded.append(id)
            case .paused, .completed, .failed, .interrupted, nil:
                break
            }
        }
        return (recorded.isEmpty ? [] : [.record(recorded, .paused)]) + stops
    }

    /// Queues paused and failed downloads again, and makes this manager run the given ones from now on. One
    /// recorded running elsewhere is followed while `claimedElsewhere`, and queued if its owner is gone.
    mutating func resume(_ ids: [DownloadID], claimedElsewhere: (DownloadID) -> Bool) -> [Action] {
        var recorded: [DownloadID] = []
        for id in ids {
            guard let entry = entries[id] else { continue }
            entries[id]?.adopted = true
            entries[id]?.ownedElsewhere = false
            switch entry.phase {
            case .paused, .failed, .interrupted:
                set(id, .queued)
                recorded.append(id)
            case .queued:
                set(id, .queued)
            case .runningElsewhere(.queued) where rules.runsDownloads:
                // Try again: the claim decides who runs it.
                set(id, .queued)
            case .runningElsewhere where rules.runsDownloads && !claimedElsewhere(id):
                set(id, .queued)
                recorded.append(id)
            case .runningElsewhere, .runningHere, .completed:
                break
            }
        }
        return recorded.isEmpty ? [] : [.record(recorded, .queued)]
    }

    /// A completed download whose file changed on disk is fetched again: queued, run by this manager. The owner
    /// records `queued` itself, with the transfer columns it resets, in one transaction (a `record` action would write
    /// the state alone), and then reports it.
    mutating func reopen(_ id: DownloadID) -> [Action] {
        guard entries[id]?.phase == .completed else { return [] }
        entries[id]?.adopted = true
        entries[id]?.ownedElsewhere = false
        set(id, .queued)
        return [.report(id)]
    }

    /// A completed download whose file changed on disk, kept as it is (``ExistingFilePolicy/keep``), or that cannot
    /// be replaced: it fails (its error says why).
    mutating func fileRefused(_ id: DownloadID) -> [Action] {
        guard entries[id]?.phase == .completed else { return [] }
        set(id, .failed)
        return [.record([id], .failed)]
    }

    /// Forgets downloads: those not running here at once, running ones once their job has stopped.
    mutating func remove(_ ids: [DownloadID], deletingFiles: Bool) -> [Action] {
        var idle: [DownloadID] = []
        var stops: [Action] = []
        for id in ids where entries[id] != nil {
            if case .runningHere = entries[id]?.phase {
                set(id, .runningHere(stopping: .remove(deletingFile: deletingFiles)))
                stops.append(.stop(id, .remove(deletingFile: deletingFiles)))
            } else {
                idle.append(id)
            }
        }
        return (idle.isEmpty ? [] : [.forget(idle, deletingFiles: deletingFiles)]) + stops
    }

    /// Starts queued downloads while slots are free: higher priority first, then first added. Those for which
    /// `holdingBack` is true (their host is busy) are held back instead, until ``releaseHeldBack(count:)``.
    mutating func schedule(holdingBack: ((DownloadID) -> Bool)? = nil) -> [Action] {
        guard !isShutDown, !isHeld, rules.runsDownloads else { return [] }
        var starts: [Action] = []
        // A job that needs its slot back comes before any queued download.
        while slotsInUse < rules.maxConcurrentDownloads, !reclaiming.isEmpty {
            let id = reclaiming.removeFirst()
            _ = endSlotless(id)
            starts.append(.grantSlot(id))
        }
        while slotsInUse < rules.maxConcurrentDownloads, let id = queue.popFirst() {
            if let holdingBack, holdingBack(id) {
                // Its host has no connection left: it waits out of the run queue, and the slot goes to the next.
                heldBack.insert(id, priority: entries[id]?.priority ?? 0)
                continue
            }
            set(id, .runningHere(stopping: nil))
            starts.append(.start(id))
        }
        return starts
    }

    /// Another owner holds the claim of a download this manager meant to start; `recorded` is its stored state
    /// (nil: the record is gone, and the next look at the store settles it).
    mutating func claimFailed(_ id: DownloadID, recorded: DownloadState?) -> [Action] {
        guard case .runningHere = entries[id]?.phase else { return [] }
        let state = recorded ?? .queued
        switch state {
        case .queued, .running: set(id, .runningElsewhere(recorded: state))
        case .paused, .completed, .failed, .interrupted: set(id, Phase(recorded: state))
        }
        return state == .queued ? [] : [.report(id)]
    }

    /// The download's host has no connection left (other workers hold them all): it goes back to `queued`, out of
    /// the run queue until ``releaseHeldBack(count:)``, so the next queued download (maybe of another host) starts.
    mutating func hostBusy(_ id: DownloadID) -> [Action] {
        guard case .runningHere(stopping: nil) = entries[id]?.phase else { return [] }
        heldBack.insert(id, priority: entries[id]?.priority ?? 0)
        set(id, .queued)
        return []
    }

    /// Puts the first `count` downloads held back for their host (all of them by default) into the run queue again,
    /// in their order.
    mutating func releaseHeldBack(count: Int = .max) {
        var released: [(id: DownloadID, priority: Int)] = []
        while released.count < count, let id = heldBack.popFirst() {
            if let entry = entries[id], entry.phase == .queued, wouldRun(id) { released.append((id, entry.priority)) }
        }
        queue.insert(contentsOf: released)
    }

    /// The store took the download's claim away (a lease that ran out while this worker was cut off): the job stops
    /// without recording anything, since another worker now runs the download.
    mutating func claimLost(_ id: DownloadID) -> [Action] {
        guard case .runningHere(let stopping) = entries[id]?.phase, stopping == nil || stopping == .pause else {
            return []
        }
        set(id, .runningHere(stopping: .claimLost))
        return [.stop(id, .claimLost)]
    }

    /// A job here has its complete file and goes to finish it: it gives its slot to the next queued download, unless
    /// it is being stopped or as many as allowed are finishing already (then it keeps its slot). `heldBytes`: the
    /// size of its body held in memory, nil for an open part file (see ``finishingFileLimit`` and
    /// ``finishingHeldLimit``). Returns whether it gave it; ``schedule(holdingBack:)`` then starts the next.
    mutating func finishingStarted(_ id: DownloadID, holding heldBytes: Int64?) -> Bool {
        guard case .runningHere(stopping: nil) = entries[id]?.phase, !finishingHere.contains(id) else { return false }
        if let heldBytes {
            guard finishingHeld.count < finishingHeldLimit,
                finishingHeldBytes + heldBytes <= Self.finishingHeldByteLimit
            else { return false }
            finishingHeld[id] = heldBytes
            finishingHeldBytes += heldBytes
        } else {
            guard finishingHere.count - finishingHeld.count < finishingFileLimit else { return false }
        }
        finishingHere.insert(id)
        return true
    }

    /// The job no longer finishes, or waits for space, without a slot. Returns whether it did.
    private mutating func endSlotless(_ id: DownloadID) -> Bool {
        if waitingForSpace.remove(id) != nil { return true }
        guard finishingHere.remove(id) != nil else { return false }
        if let bytes = finishingHeld.removeValue(forKey: id) { finishingHeldBytes -= bytes }
        return true
    }

    /// A job needs a connection again (its finishing failed and it tries again, or it has room again after waiting
    /// for space). Returns true when it has a slot: it kept its own, it is being stopped (it will not connect), or
    /// one is free now. Otherwise it waits for a `grantSlot` from ``schedule(holdingBack:)``, which serves it before
    /// any queued download.
    mutating func slotNeeded(_ id: DownloadID) -> Bool {
        guard case .runningHere(stopping: nil) = entries[id]?.phase,
            finishingHere.contains(id) || waitingForSpace.contains(id)
        else { return true }
        if slotsInUse < rules.maxConcurrentDownloads {
            _ = endSlotless(id)
            return true
        }
        if !reclaiming.contains(id) { reclaiming.append(id) }
        return false
    }

    /// A job of this manager ended.
    mutating func jobEnded(_ id: DownloadID, _ ending: Ending) -> [Action] {
        guard case .runningHere(let stopping) = entries[id]?.phase else { return [] }
        switch (ending, stopping) {
        case (.completed, .remove(let deletingFile)):
            // Finished just as it was removed: the file is complete, so only `deletingFile` deletes it.
            set(id, .completed)
            return [.forget([id], deletingFiles: deletingFile)]
        case (_, .remove(let deletingFile)):
            // Still running here until it is forgotten (``forgotten(_:)``), or paused if that fails
            // (``removalFailed(_:)``): a command that waits for nothing to run here must not end before the removal,
            // and the event that says so, are done (`haul run` ended with the download shown running).
            return [.forget([id], deletingFiles: deletingFile)]
        case (.stopped, .claimLost), (.failed, .claimLost):
            // The other worker owns it now: nothing to record here.
            set(id, .runningElsewhere(recorded: .running))
            return []
        case (.completed(let recorded), _):
            set(id, .completed)
            return recorded ? [.report(id)] : [.record([id], .completed)]
        case (.failed, _):
            set(id, .failed)
            return [.record([id], .failed)]
        case (.stopped, .shutdown) where ownsOnShutdown(id):
            // A foreground command's own download, left unfinished: nothing continues it unless asked.
            set(id, .interrupted)
            return [.record([id], .interrupted)]
        case (.stopped, .hold):
            set(id, .queued)
            return [.record([id], .queued)]
        case (.stopped, .shutdown):
            // Left recorded as running: the next owner continues it.
            set(id, .runningElsewhere(recorded: .running))
            return []
        case (.stopped, .pause), (.stopped, nil):
            // Stopped without being asked (cancelled from outside) is kept resumable too.
            set(id, .paused)
            return [.record([id], .paused)]
        }
    }

    /// Removed downloads whose files and records are gone.
    mutating func forgotten(_ ids: [DownloadID]) {
        for id in ids {
            if case .runningHere = entries[id]?.phase { runningHere -= 1 }
            leftRunning(id)
            entries[id] = nil
            queue.remove(id)
        }
    }

    /// A removed download whose file could not be deleted: kept, stopped and resumable, so it can be removed again
    /// (one that had completed stays completed).
    mutating func removalFailed(_ id: DownloadID) -> [Action] {
        guard case .runningHere(stopping: .remove) = entries[id]?.phase else { return [] }
        set(id, .paused)
        return [.record([id], .paused)]
    }

    /// Another process recorded `state` for a download (or added it); `ownedElsewhere` when its record names
    /// another foreground command. A job here only takes a pause from outside; any other download takes the recorded
    /// state.
    mutating func recorded(
        _ id: DownloadID, _ state: DownloadState, priority: Int, ownedElsewhere: Bool = false
    ) -> [Action] {
        guard let entry = entries[id] else {
            entries[id] = Entry(
                phase: Phase(recorded: state), priority: priority, adopted: false, ownedElsewhere: ownedElsewhere)
            set(id, Phase(recorded: state))
            return []
        }
        if case .runningHere = entry.phase {
        } else if entries[id]?.ownedElsewhere != ownedElsewhere {
            // Resumed or taken by another command (or handed to the queue) since.
            entries[id]?.ownedElsewhere = ownedElsewhere
            if ownedElsewhere { entries[id]?.adopted = false }
        }
        setPriority(priority, of: id)
        switch (entry.phase, state) {
        case (.runningHere(let stopping), .paused) where stopping == nil:
            set(id, .runningHere(stopping: .pause))
            return [.stop(id, .pause)]
        case (.runningHere, _):
            return []
        case (.runningElsewhere(.queued), .queued):
            // Its owner started it less than a tick ago; the claim says who runs it.
            break
        default:
            set(id, Phase(recorded: state))
        }
        return entry.phase.state == state ? [] : [.report(id)]
    }

    /// Another process deleted the record.
    mutating func vanished(_ id: DownloadID) -> [Action] {
        switch entries[id]?.phase {
        case .runningHere:
            set(id, .runningHere(stopping: .remove(deletingFile: false)))
            return [.stop(id, .remove(deletingFile: false))]
        case nil:
            return []
        default:
            forgotten([id])
            return [.drop(id)]
        }
    }

    /// The claim of a watched download was released (its owner ended); `recorded` is its stored state, nil if the
    /// record is gone. What the owner left unfinished is taken over, unless it belongs to a foreground command:
    /// that one is interrupted.
    mutating func claimReleased(_ id: DownloadID, recorded: DownloadState?, priority: Int) -> [Action] {
        guard case .runningElsewhere = entries[id]?.phase else { return [] }
        switch recorded {
        case nil:
            return vanished(id)
        case .running? where entries[id]?.ownedElsewhere == true:
            set(id, .interrupted)
            return [.record([id], .interrupted)]
        case .running?:
            set(id, .queued)
            return [.record([id], .queued)]
        case .queued?:
            set(id, .queued)
            return []
        case let state?:
            return self.recorded(id, state, priority: priority)
        }
    }

    /// Changes how many downloads run at once; more start at the next ``schedule()``. Running jobs beyond a lower
    /// limit finish; none is stopped.
    mutating func setMaxConcurrentDownloads(_ count: Int) {
        rules.maxConcurrentDownloads = max(1, count)
    }

    /// Changes a download's priority: its place in the run queue whenever it is queued.
    mutating func setPriority(_ priority: Int, of id: DownloadID) {
        guard let entry = entries[id], entry.priority != priority else { return }
        entries[id]?.priority = priority
        queue.remove(id)
        set(id, entry.phase)
    }

    /// Stops every job here for shutdown; no download starts afterwards. A manager that owns its downloads records
    /// those it leaves unfinished interrupted (the queued ones now, the running ones when their jobs end).
    mutating func shutdown() -> [Action] {
        guard !isShutDown else { return [] }
        isShutDown = true
        let running = entries.compactMap { id, entry in
            if case .runningHere = entry.phase { id } else { nil }
        }
        let waiting = entries.compactMap { id, entry in entry.phase == .queued && ownsOnShutdown(id) ? id : nil }
        for id in waiting { set(id, .interrupted) }
        let interrupted: [Action] = waiting.isEmpty ? [] : [.record(waiting.sorted(), .interrupted)]
        return interrupted
            + running.sorted().map { id in
                set(id, .runningHere(stopping: .shutdown))
                return .stop(id, .shutdown)
            }
    }

    /// Whether `id` is this manager's own, as a foreground command's, when it shuts down.
    private func ownsOnShutdown(_ id: DownloadID) -> Bool {
        rules.ownsItsDownloads && entries[id]?.adopted == true
    }

    // MARK: - The one place phases change

    mutating func set(_ id: DownloadID, _ phase: Phase) {
        guard var entry = entries[id] else { return }
        if case .runningHere = entry.phase { runningHere -= 1 }
        if case .runningHere = phase { runningHere += 1 } else { leftRunning(id) }
        entry.phase = phase
        entries[id] = entry
        if phase != .queued { heldBack.remove(id) }
        if phase == .queued, wouldRun(id), !heldBack.contains(id) {
            if !queue.contains(id) { queue.insert(id, priority: entry.priority) }
        } else {
            queue.remove(id)
        }
    }

    /// A job that ends held no slot if it was finishing or waiting for space.
    private mutating func leftRunning(_ id: DownloadID) {
        guard endSlotless(id) else { return }
        reclaiming.removeAll { $0 == id }
    }
}
