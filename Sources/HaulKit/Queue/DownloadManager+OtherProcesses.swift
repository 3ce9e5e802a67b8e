import Foundation

/// How a manager follows the other processes on its store: what they record, and the downloads whose owner died.
extension DownloadManager {
    func startWatching() {
        let interval = configuration.externalChangeInterval
        let clock = configuration.tickClock
        watcherTask = Task { [weak self] in
            while !Task.isCancelled {
                try? await clock.sleep(for: interval)
                guard let self else { return }
                await self.reconcile()
            }
        }
    }

    /// Applies what other processes changed in the store, and takes over downloads whose owner ended.
    ///
    /// One look at a time (the watcher task is its only caller; the flag makes it so): the watcher's state is taken
    /// out for the look, which awaits the store, and put back.
    func reconcile() async {
        guard !lifecycle.isShutDown, !reconciling else { return }
        reconciling = true
        defer { reconciling = false }
        await releaseClaimsAhead()
        await recordRunning()
        for id in await store.lostClaims().sorted() {
            configuration.logger.warning(
                "another worker took over the download; stopping here", metadata: ["download": "\(id)"])
            await performAndWait(lifecycle.claimLost(id))
        }
        var watcher = self.watcher
        // What this process changes while the store is read is newer than what the store says of it: set aside, and
        // read again at the next look (another process may have changed it too).
        let mark = records.beginLook()
        defer { records.endLook() }
        let changes = await watcher.look(at: store, unfinishedOnly: historyOnDisk) {
            historyOnDisk ? lifecycle.entries.values.reduce(0) { $1.phase == .completed ? $0 : $0 + 1 } : records.count
        }
        self.watcher = watcher
        var unread = setAsideByLook
        setAsideByLook = []
        if let changes {
            // Until every change is taken in (the loop below waits), claims read the state again.
            viewToken = nil
            for stored in changes.updated {
                guard !lifecycle.isShutDown else { return }
                unread.remove(stored.downloadID)
                await adoptUnlessChanged(stored, since: mark)
            }
            if let remaining = changes.remaining {
                // Added here since the read: not gone.
                for id in records.ids.sorted() where !remaining.contains(id) && !records.changed(id, since: mark) {
                    await performAndWait(lifecycle.vanished(id))
                    removalFailures[id] = nil
                }
            }
            viewToken = watcher.lastToken
        }
        if !unread.isEmpty, let stored = try? await store.fetch(unread.sorted()) {
            for record in stored where !lifecycle.isShutDown { await adoptUnlessChanged(record, since: mark) }
        }
        let watched = lifecycle.watchedElsewhere
        let stillClaimed = await store.claimedElsewhere(watched)
        for id in watched where !stillClaimed.contains(id) {
            // The claim is free: the other process ended. Take over only what it left unfinished.
            let stored = try? await store.fetch(id)
            if let stored { replace(with: stored) }
            await perform(
                lifecycle.claimReleased(id, recorded: stored?.state, priority: stored?.options.priority ?? 0))
        }
        // A host whose connections were all taken gets one more try a tick.
        busyHosts = []
        lifecycle.releaseHeldBack()
        await schedule()
    }

    /// How often a manager with nothing to run here looks at the downloads other processes run, when the store says
    /// something changed (``followOthersWhileIdle()``).
    static let idleLookInterval = Duration.milliseconds(50)

    /// How many of the downloads held back for a busy host, or at the head of the run queue, a look of
    /// ``followOthersWhileIdle()`` reads, at most.
    static let heldBackFollowed = 256

    /// Follows the downloads other processes run, those held back here for a busy host, and the head of the run queue
    /// (another worker may take and finish them), while none runs here: when the store's change token moved, their
    /// records are read (only theirs, up to ``heldBackFollowed`` held back or queued) and taken in. A worker whose own
    /// part of a shared queue is done so sees the others' last completions (and `haul run` ends) at once, not at the
    /// next retry or tick. It looks every
    /// ``idleLookInterval``; after a second of reads that found nothing changed (others' checkpoints and other
    /// downloads move the token too), each such read makes the next wait twice as long, up to a tick, and a read that
    /// finds a change makes it short again. Called whenever ``schedule()`` finds nothing to start; it stops once a
    /// job runs here or nothing is left to follow.
    func followOthersWhileIdle() {
        // Queued downloads are followed only outside a hold (a pause schedule's window): held, they wait for its end,
        // and a lone process would ask the store's change token every look until then.
        guard followingOthers == nil, jobs.isEmpty, startsInFlight.isEmpty, configuration.runsDownloads,
            !lifecycle.isShutDown,
            (lifecycle.anyQueued && !lifecycle.isHeld) || lifecycle.heldBackCount > 0 || lifecycle.anyRunningElsewhere
        else { return }
        followingOthers = Task { [weak self, clock = configuration.tickClock] in
            var look = IdleLook(wait: Self.idleLookInterval)
            while !Task.isCancelled {
                try? await clock.sleep(for: look.wait)
                guard let self, let next = await self.lookAtOthersWhileIdle(look) else { return }
                look = next
            }
        }
    }

    /// Where ``followOthersWhileIdle()`` is: the wait before its next look, the change token of its last read, and how
    /// many reads in a row found nothing changed.
    struct IdleLook: Sendable {
        var wait: Duration
        var token: Int?
        var quietReads = 0
    }

    /// One look of ``followOthersWhileIdle()``, `look.wait` after the last; returns the next, or nil to stop following.
    private func lookAtOthersWhileIdle(_ look: IdleLook) async -> IdleLook? {
        guard jobs.isEmpty, startsInFlight.isEmpty, !lifecycle.isShutDown else {
            followingOthers = nil
            return nil
        }
        // The tick's look is under way; the next one here comes after it.
        guard !reconciling, let token = try? await store.changeToken(), token != look.token else { return look }
        var next = look
        next.token = token
        // And the head of the run queue: with nothing running here, what waits there is what another worker took
        // (claimed ahead of this one's starts, which were refused) or finished.
        let heldBack = lifecycle.heldBack.prefix(Self.heldBackFollowed)
        let followed =
            lifecycle.runningElsewhere + heldBack + lifecycle.queued(first: Self.heldBackFollowed - heldBack.count)
        guard !followed.isEmpty else {
            followingOthers = nil
            return nil
        }
        var changed = false
        // As in ``reconcile()``: what this process changes during the read is newer than what was read.
        let mark = records.beginLook()
        defer { records.endLook() }
        for stored in (try? await store.fetch(followed)) ?? [] where !lifecycle.isShutDown {
            // Only what another process changed, and is still followed: a start here since has its own view.
            switch lifecycle.phase(of: stored.downloadID) {
            case .runningElsewhere(let recorded)? where recorded != stored.state: break
            case .queued? where stored.state != .queued: break
            default: continue
            }
            guard await adoptUnlessChanged(stored, since: mark) else {
                // Changed here meanwhile (a resume whose write is on its way): read again at the next look, which
                // first asks the store's change token, so that this process's writes sent before are in (SQLite asks
                // its writer; PostgreSQL's reads and writes take turns), and at the next tick's.
                next.token = nil
                continue
            }
            changed = true
        }
        guard changed else {
            next.quietReads += 1
            let quiet = Duration.seconds(1) / Self.idleLookInterval
            if Double(next.quietReads) >= quiet { next.wait = min(look.wait * 2, configuration.externalChangeInterval) }
            return next
        }
        next.quietReads = 0
        next.wait = Self.idleLookInterval
        await schedule()
        return followingOthers == nil ? nil : next
    }

    /// Takes the store's view of a download that another process recorded (or added). One that process completed
    /// reports its size first (no job here sent its progress), so an observer's count of bytes is not left at 0.
    func adopt(_ stored: DownloadRecord) -> [DownloadLifecycle.Action] {
        let id = stored.downloadID
        let isNew = !records.contains(id)
        let wasCompleted = lifecycle.phase(of: id) == .completed
        if lifecycle.phase(of: id).map({ if case .runningHere = $0 { true } else { false } }) != true {
            replace(with: stored)
        }
        let actions = lifecycle.recorded(
            id, stored.state, priority: stored.options.priority,
            ownedElsewhere: stored.owner != nil && stored.owner != ownerText)
        if isNew {
            hub.yield(id, .added(snapshot(of: stored)))
        } else if !wasCompleted, lifecycle.phase(of: id) == .completed,
            let size = stored.fingerprint?.size ?? stored.transfer.totalBytes
        {
            hub.yield(id, .progress(DownloadProgress(receivedBytes: size, expectedBytes: size)))
        }
        return actions
    }

    /// Takes in `stored`, read by a look begun at `mark`, unless its record changed here since (then set aside for the
    /// next tick's look, which reads it again); returns whether it was taken in.
    @discardableResult
    private func adoptUnlessChanged(_ stored: DownloadRecord, since mark: UInt64) async -> Bool {
        guard !records.changed(stored.downloadID, since: mark) else {
            setAsideByLook.insert(stored.downloadID)
            return false
        }
        await performAndWait(adopt(stored))
        return true
    }

    /// Records `running` for the jobs started since the last tick that still run. Only rows still `queued` change:
    /// a pause or removal from another process in the meantime is never overwritten (the tick then applies it).
    private func recordRunning() async {
        let unrecorded = jobs.filter { !$0.value.runningRecorded }.keys
        guard !unrecorded.isEmpty else { return }
        for id in unrecorded { jobs[id]?.runningRecorded = true }
        let started = unrecorded.compactMap { id in records[id].flatMap { $0.state == .running ? $0 : nil } }
        do {
            try await store.recordRunning(started)
        } catch {
            configuration.logger.error("cannot record running downloads", metadata: ["error": "\(error)"])
        }
    }
}
