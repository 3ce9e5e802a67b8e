import Foundation

/// Jobs: starting them once claimed, what they ask of the manager (``ManagerJobHost``), and their ends.
extension DownloadManager {
    struct RunningJob {
        let task: Task<Void, Never>
        let state: TransferState
        let limiter: RateLimiter
        /// Whether its `running` state is in the database: it is recorded once per
        /// ``Configuration/externalChangeInterval`` for the jobs still running, so a small download never writes it.
        var runningRecorded = false
    }

    // MARK: - Jobs

    /// Starts queued downloads while slots are free. A download whose host has no connection left goes back and
    /// frees its slot, so this goes on until every slot runs a job or nothing startable is queued.
    func schedule() async {
        while true {
            // Downloads of a host known busy wait without asking the store (one refusal a tick per host).
            let busy = heldHosts.isEmpty ? busyHosts : busyHosts.union(heldHosts.keys)
            let starts = lifecycle.schedule(
                holdingBack: busy.isEmpty
                    ? nil
                    : { [records, hostKeys] id in
                        guard let host = hostKeys[id] ?? records[id].map({ Self.host(of: $0) }) else { return false }
                        return busy.contains(host)
                    })
            guard !starts.isEmpty else { return followOthersWhileIdle() }
            let heldBack = lifecycle.heldBackCount
            await perform(starts)
            // Starts whose claims were all refused (another worker holds them) leave nothing running here: their
            // downloads are followed at once, not at the next tick's look (a worker of a shared queue learnt its
            // last downloads' ends, and `haul run` ended, up to a tick after the worker that ran them).
            guard lifecycle.heldBackCount > heldBack else { return followOthersWhileIdle() }
        }
    }

    /// The lowercased host of a download's URL ("" if it has none), cached: the scheduler asks often.
    func hostKey(of record: DownloadRecord) -> String { hostKey(record.downloadID, url: record.url) }

    /// The host key of download `id`, as its record's, without copying the record; nil if it has none.
    func hostKey(of id: DownloadID) -> String? {
        hostKeys[id] ?? records.url(of: id).map { hostKey(id, url: $0) }
    }

    private func hostKey(_ id: DownloadID, url: String) -> String {
        if let known = hostKeys[id] { return known }
        let host = URLHost.lowercased(in: url)
        hostKeys[id] = host
        return host
    }

    static func host(of record: DownloadRecord) -> String { URLHost.lowercased(in: record.url) }

    /// Starts a job for `id` once it is claimed (`claimed`: the outcome of a claim made together with others).
    ///
    /// The lifecycle made the download `runningHere` before this runs, so no other start takes it. While the claim is
    /// awaited, a pause, removal or shutdown may come: it finds no job to stop, so the start is marked in flight
    /// (``startsInFlight``, which ``performAndWait(_:)`` waits for), and once the claim is in, a start whose
    /// download was asked to stop meanwhile ends as a job stopped at once would (the claim released after its
    /// state is recorded).
    func start(_ id: DownloadID, claimed: ClaimOutcome? = nil, freedBefore: Int? = nil) async {
        guard var record = records[id], !record.isDamaged else { return await claimRefused(id) }
        let host = hostKey(of: record)
        startsInFlight[id] = startsInFlight[id] ?? []
        defer { for waiter in startsInFlight.removeValue(forKey: id) ?? [] { waiter.resume() } }
        // One refusal a tick per host: the others of a busy host wait without asking the store. A claim made
        // together with others stands (a lease it took must be used or released).
        let outcome: ClaimOutcome
        // The connections given back as of the store's answer (nil: not the store's answer).
        var askedAt: Int?
        if let claimed {
            outcome = claimed
            askedAt = freedBefore
        } else if let ahead = takeClaimAhead(id) {
            outcome = ahead
        } else if busyHosts.contains(host) {
            outcome = .hostBusy
        } else {
            askedAt = connectionsFreed
            outcome = await store.claim(
                id, share: HostShare(host: host, wanted: 1, limit: configuration.maxConnectionsPerHost),
                viewToken: viewToken)
        }
        switch lifecycle.phase(of: id) {
        case .runningHere(stopping: nil):
            // Still to run here: the record may have changed while the claim was awaited.
            record = records[id] ?? record
        case .runningHere:
            // A pause, removal or shutdown came while the claim was awaited: the job ends before it runs.
            return await jobEnded(id, .stopped(record), started: false)
        default:
            // Dropped meanwhile (another process deleted it).
            return await store.release(id)
        }
        switch outcome {
        case .granted:
            busyRetryDelay = Self.busyHostRetry
        case .hostBusy:
            if let askedAt, askedAt != connectionsFreed {
                // Connections were given back while the claim was on its way: the answer may not count them. Back
                // to the queue, and asked again at once rather than at the next tick.
                await perform(lifecycle.hostBusy(id))
                releaseHeldBack(freeing: [])
                Task { await schedule() }
            } else {
                configuration.logger.debug(
                    "host busy: its downloads wait for a connection",
                    metadata: ["download": "\(id)", "host": "\(host)"])
                busyHosts.insert(host)
                await perform(lifecycle.hostBusy(id))
                retryBusyHostsSoon()
            }
            return
        case .refused:
            return await claimRefused(id)
        }
        let now = Date()
        record.state = .running
        record.startedAt = record.startedAt ?? now
        record.updatedAt = now
        record.lastError = nil
        records[id] = record

        let state = TransferState(.init(written: record.transfer.durableBytes, total: record.transfer.totalBytes))
        let limiter = RateLimiter(bytesPerSecond: record.options.speedLimit, clock: configuration.tickClock)
        // With hooks or webhooks, `running` is recorded before the job starts (not at the next tick), so that every
        // start is in the outbox: a download shorter than a tick would go from queued to completed.
        let recordsRunning = eventOutbox != nil
        let task = runJob(record, state: state, limiter: limiter, host: host, recordingRunning: recordsRunning)
        jobs[id] = RunningJob(task: task, state: state, limiter: limiter)
        jobs[id]?.runningRecorded = recordsRunning
        hub.yield(id, .status(.running))
    }

    /// Runs a job of `record` in a task of its own, which reports how it ended: ``jobHandedOff(_:_:)`` for a small
    /// file handed to the finishing queue (the download ends with its group, in ``handOffsEnded(_:)``), else
    /// ``jobEnded(_:_:started:)``. `recordingRunning`: its `running` state is recorded before it starts;
    /// `handedOverAfter`: the failed finishing of an earlier job's small file that this one takes over.
    func runJob(
        _ record: DownloadRecord, state: TransferState, limiter: RateLimiter, host: String, recordingRunning: Bool,
        handedOverAfter: (any Error)? = nil
    ) -> Task<Void, Never> {
        let id = record.downloadID
        let limiterOfHost = host.isEmpty ? nil : hostLimiter(host)
        return Task { [environment = jobEnvironment, store, logger = configuration.logger] in
            if recordingRunning {
                do {
                    try await store.recordRunning([record])
                } catch {
                    logger.error("cannot record a running download", metadata: ["error": "\(error)"])
                    // The next tick records it.
                    self.runningNotRecorded(id)
                }
            }
            var job = DownloadJob(
                record: record, state: state, limiter: limiter, host: host, hostLimiter: limiterOfHost,
                environment: environment, handedOverAfter: handedOverAfter)
            let outcome = await job.run()
            if case .handedOff(let request) = outcome { return await self.jobHandedOff(id, request) }
            await self.jobEnded(id, outcome)
        }
    }

    /// Returns once `id` is not being started (its claim awaited by ``start(_:claimed:)``).
    func startSettled(_ id: DownloadID) async {
        guard startsInFlight[id] != nil else { return }
        await withCheckedContinuation { startsInFlight[id, default: []].append($0) }
    }

    /// The job's `running` could not be recorded when it started.
    func runningNotRecorded(_ id: DownloadID) { jobs[id]?.runningRecorded = false }

    /// Another process runs the download (or it cannot run): show what the store records, and take over if its owner
    /// dies.
    ///
    /// The store's view may lag this manager's own write, on its way while the claim read it (a resume, a completed
    /// download queued again: queued here, still paused or completed there). When the stored record is older than
    /// the one here, it is read again once the writes sent before are in; if it is runnable then, the download is
    /// claimed again at the next look (as one whose owner let it go), and the record here, newer, is kept.
    private func claimRefused(_ id: DownloadID) async {
        var stored = try? await store.fetch(id)
        var lagged = false
        if let lagging = stored, let here = records[id], lagging.updatedAt < here.updatedAt {
            // SQLite reads beside its writer: its change token is asked of the writer, so the answer comes once the
            // writes sent before are committed. PostgreSQL's reads and writes of records take turns in the order they
            // were made, and the in-memory store's are immediate: there the first read already saw them.
            _ = try? await store.changeToken()
            stored = try? await store.fetch(id)
            lagged = true
        }
        // A pause, removal or shutdown that came while the store was read: the start ends as a stopped job would.
        if case .runningHere(let stopping) = lifecycle.phase(of: id), stopping != nil, let record = records[id] {
            return await jobEnded(id, .stopped(record), started: false)
        }
        if lagged, let state = stored?.state, state == .queued || state == .running {
            // Runnable now that this manager's own write is in: claimed again at the next look.
            await perform(lifecycle.claimFailed(id, recorded: state))
            return
        }
        if let stored { replace(with: stored) }
        await perform(lifecycle.claimFailed(id, recorded: stored?.state))
    }

    /// The job has its complete file: its slot goes to the next queued download while the file is finished.
    func jobFinishing(_ id: DownloadID, holding heldBytes: Int64?) async {
        guard lifecycle.finishingStarted(id, holding: heldBytes) else { return }
        await slotGivenBack(id)
    }

    /// The job gave its slot back (it holds no connection): the next queued download takes it.
    func slotGivenBack(_ id: DownloadID) async {
        guard store.claimsTogether else { return await schedule() }
        // Later, once the jobs that finished meanwhile have given their slots too: their hosts' connections are
        // given back together, and the next downloads claimed together. One round at a time: the slots given back
        // while a round awaits the store go in the next one (a round each would be a round trip each).
        connectionsDone.append(id)
        guard !givingBackSlots else { return }
        givingBackSlots = true
        Task {
            while !connectionsDone.isEmpty {
                let done = connectionsDone
                connectionsDone = []
                await store.connectionsDone(done)
                connectionsFreed += 1
                // Their hosts' connections are free now: downloads held back for a host found busy meanwhile (a claim
                // that counted these connections still taken) ask again at once rather than at the next tick.
                releaseHeldBack(freeing: Set(done.compactMap { hostKeys[$0] ?? records[$0].map(Self.host(of:)) }))
                await schedule()
            }
            givingBackSlots = false
        }
    }

    /// Connections were given back (a job ended, a round of give-backs was recorded): `freed` hosts are no longer
    /// known busy, and the downloads held back for a busy host go back to the run queue, up to one per slot.
    ///
    /// At every give-back, not only when one of `freed` was known busy: a busy host holds back every queued download
    /// of it that the scheduler meets, the whole queue when it has one host, and each give-back releases only a few,
    /// so the rest would wait for the next tick. A host still known busy holds its downloads back again at once,
    /// without asking the store.
    func releaseHeldBack(freeing freed: Set<String>) {
        busyHosts.subtract(freed)
        lifecycle.releaseHeldBack(count: configuration.maxConcurrentDownloads)
    }

    /// Returns once the job, which gave its slot back, has one again.
    func jobNeedsSlot(_ id: DownloadID) async {
        // A job back from waiting for its host ends the host's hold: its queued downloads may start again.
        let released = hostWaitEnded(id)
        guard !lifecycle.slotNeeded(id) else {
            if released { await schedule() }
            return
        }
        await withCheckedContinuation { slotWaiters[id] = $0 }
    }

    /// The job ended (or, `started` false, a start was overtaken before its job ran): records how, releases the
    /// claim, then starts what may start now.
    func jobEnded(_ id: DownloadID, _ outcome: DownloadJob.Outcome, started: Bool = true) async {
        guard let host = await endJob(id, outcome, started: started) else { return }
        // Its connections are free again: downloads of its host held back here may take them at once.
        releaseHeldBack(freeing: [host])
        await schedule()
    }

    /// Records how the job ended, then releases the claim; returns the download's host, or nil if it had no job
    /// here. Those waiting for the job's end (``jobSettled(_:)``) go on once it is recorded.
    func endJob(_ id: DownloadID, _ outcome: DownloadJob.Outcome, started: Bool = true) async -> String? {
        hostWaitEnded(id)
        // Release the claim only once the outcome is in the database, so no other process takes over a download
        // that was just paused or finished.
        guard !started || jobs.removeValue(forKey: id) != nil else {
            await store.release(id)
            return nil
        }
        // Until its end is recorded, it is still waited for (``jobSettled(_:)``).
        endingJobs.insert(id)
        defer {
            endingJobs.remove(id)
            for waiter in jobEndWaiters.removeValue(forKey: id) ?? [] { waiter.resume() }
        }
        guard let host = hostKey(of: id) else {
            await store.release(id)
            return nil
        }
        // Changed in place (a copy taken and set back is two copies of the record).
        let ended = outcome.record
        records.modify(id) { record in
            // The job's columns come back whole, and the fingerprint of a file it put in place; the life-cycle
            // columns are ours.
            record.destinationPath = ended.destinationPath
            record.transfer = ended.transfer
            record.fingerprint = ended.fingerprint
            switch outcome {
            case .completed(let finished):
                record.completedAt = finished.completedAt ?? Date()
                record.updatedAt = finished.updatedAt
            case .failed(_, let error):
                record.lastError = error
            case .stopped, .handedOff:
                break
            }
        }
        let ending: DownloadLifecycle.Ending
        switch outcome {
        case .completed(let finished):
            ending = .completed(recorded: finished.state == .completed)
        case .failed(_, let error):
            configuration.logger.info("download failed", metadata: ["download": "\(id)", "error": "\(error)"])
            ending = .failed
        case .stopped:
            ending = .stopped
        case .handedOff:
            // Never given here: a handed-off download ends with its finishing group (`handOffsEnded`).
            configuration.logger.error("a handed-off download ended as a job", metadata: ["download": "\(id)"])
            ending = .stopped
        }
        let actions = lifecycle.jobEnded(id, ending)
        if lifecycle.phase(of: id) == .completed { records.modify(id) { $0.state = .completed } }
        if let failure = await perform(actions).failure {
            removalFailures[id] = failure
            // Kept because a file could not be deleted: stopped, not running, so it can be removed again.
            await perform(lifecycle.removalFailed(id))
        }
        await store.release(id)
        connectionsFreed += 1
        return host
    }

    /// Returns once `id` has no job: the job running (or whose file is finishing) has ended and its end is
    /// recorded.
    func jobSettled(_ id: DownloadID) async {
        // Once, not until no job is there: a job started again for the download after this one's end (resumed
        // meanwhile) is not waited for. A job that takes over a failed hand-off is: it replaces the entry without
        // an end.
        guard jobs[id] != nil || endingJobs.contains(id) else { return }
        await withCheckedContinuation { jobEndWaiters[id, default: []].append($0) }
    }

    /// Picks a free name in `directory` for `name` (`name (1).ext`, …) and reserves it for the download.
    func reserveDestination(
        for id: DownloadID, in directory: String, name: String, replacing: Bool, journal: Bool
    ) throws(DownloadError)
        -> String
    {
        guard records.contains(id) else { throw .unknownDownload(id) }
        let path = reservations.reserve(
            name, in: directory, for: id, replacingFiles: replacing, journal: journal
        ) { [records] holder in
            records.state(of: holder) != .completed
        }
        // The job records it with the rest of its columns.
        records.modify(id) { $0.destinationPath = path }
        return path
    }
}

/// The manager as its jobs' ``JobHost``: the one way a job reaches it, and where their handed-off files' ends come
/// (``FinishingReceiver``). Holds the manager weakly (the manager holds
/// the jobs' environment, which holds this); what a job asks of a manager that is gone is answered as by one that
/// is shutting down (no slot given away, no name).
final class ManagerJobHost: JobHost, FinishingReceiver {
    private weak let manager: DownloadManager?
    private let hub: EventHub
    private let store: any DownloadStore
    private let pacer: HostPacer
    private let connectionLimit: Int

    init(_ manager: DownloadManager) {
        self.manager = manager
        hub = manager.hub
        store = manager.store
        pacer = manager.session.pacer
        connectionLimit = manager.configuration.maxConnectionsPerHost
    }

    func yield(_ id: DownloadID, _ change: @autoclosure () -> DownloadEvent.Change) {
        hub.yield(id, change())
    }

    func widenClaim(_ id: DownloadID, host: String, wanted: Int) async -> Int {
        // A host that throttled gets no more connections than its backoff allows.
        let allowed = min(wanted, pacer.connectionCap(host) ?? wanted)
        return await store.widenClaim(id, share: HostShare(host: host, wanted: allowed, limit: connectionLimit))
    }

    func finishingStarts(_ id: DownloadID, holding heldBytes: Int64?) async {
        await manager?.jobFinishing(id, holding: heldBytes)
    }

    func slotNeeded(_ id: DownloadID) async {
        await manager?.jobNeedsSlot(id)
    }

    func spaceWait(_ id: DownloadID, _ shortage: FreeSpaceShortage?) async {
        await manager?.jobWaitsForSpace(id, shortage)
    }

    func hostWaitStarts(_ id: DownloadID, host: String, wait: Duration) async -> Bool {
        await manager?.jobWaitsForHost(id, host: host, for: wait) ?? false
    }

    var finishingReceiver: (any FinishingReceiver)? { self }

    func finishingEnded(_ ends: [FinishingQueue.HandOffEnd]) {
        Task { [manager] in await manager?.handOffsEnded(ends) }
    }

    func reserveDestination(
        _ id: DownloadID, in directory: String, name: String, replacing: Bool, journal: Bool
    ) async throws(DownloadError) -> String {
        guard let manager else { throw .internalError("the manager is gone") }
        return try await manager.reserveDestination(
            for: id, in: directory, name: name, replacing: replacing, journal: journal)
    }
}
