import Foundation
import Logging

/// Runs many resumable downloads at once and remembers them across restarts.
///
/// Every download is recorded in a SQLite database as soon as it is added. Bytes stream to `<file>.part`, are
/// checkpointed every second, and the file appears at its destination only when complete and verified. A manager
/// opened on the same database (a new process after a crash, say) shows the same downloads in the same states and
/// continues the ones that were running.
///
/// ```swift
/// let manager = try await DownloadManager(configuration: .init(downloadDirectory: downloads))
/// let id = try await manager.add(URL(string: "https://example.com/big.iso")!)
/// for await event in await manager.events(for: id) { print(event) }
/// ```
///
/// Call ``shutdown()`` before the process exits to checkpoint running downloads at once (they continue next time);
/// without it, they still resume after a restart, from the last checkpoint or the bytes already written.
///
/// Inside, the manager is a thin actor: a `DownloadLifecycle` value decides every change of state, and the
/// manager performs what it returns (recording, starting and stopping jobs, forgetting downloads).
public actor DownloadManager {
    public nonisolated let configuration: Configuration
    /// What this manager records as the owner of its downloads: its process, when it owns them
    /// (``Configuration/ownsItsDownloads``); nil when they are the queue's.
    nonisolated let ownerText: String?
    /// Whether completed downloads are in the store and not in memory (``Configuration/keepsHistoryInMemory`` is
    /// false and there were some when the manager opened): they are then read when asked for.
    let historyOnDisk: Bool
    /// What every job is given from ``configuration``, made once (the download directory is standardised).
    let engineSettings: EngineSettings

    let store: any DownloadStore
    /// Where the state changes ``Configuration/eventTargets`` take wait for delivery; nil without targets.
    package nonisolated let eventOutbox: (any EventOutbox)?
    let hub = EventHub()
    let globalLimiter: RateLimiter
    /// One limiter per host downloads ran from (unlimited unless a limit was set), shared by every download from it,
    /// so a limit set later applies to the running ones too.
    var hostLimiters: [String: RateLimiter] = [:]
    /// Each download's host, lowercased (see ``hostKey(of:)``).
    var hostKeys: [DownloadID: String] = [:]
    /// Hosts whose connections other workers hold, until the next tick: their downloads wait without a claim.
    var busyHosts: Set<String> = []
    /// Hosts that hold their downloads (a `Retry-After`, a spent request budget), with the jobs waiting for them off
    /// their slots: the hosts' queued downloads wait until the first of those jobs takes a slot again (see
    /// `DownloadManager+Politeness.swift`).
    var heldHosts: [String: Set<DownloadID>] = [:]
    /// Finishing downloads whose connections are still counted in a store that claims together, and whose slots the
    /// next ``schedule()`` (queued behind the calls waiting for this actor) gives out; see `jobFinishing`.
    var connectionsDone: [DownloadID] = []
    /// The store's change token as of which ``records`` holds every other writer's changes (nil while it does not):
    /// a claim made while it is still the token need not read the download's state again.
    var viewToken: Int?
    let session: HTTPSession
    /// Moves finished files into place in groups (internal for tests).
    nonisolated let finishing: FinishingQueue
    /// Writes the records new part files need first, in groups.
    nonisolated let recorder: TransferRecorder
    /// What each download is: its record, with the state the lifecycle last gave it.
    var records = RecordTable()
    /// Every change of state is decided here.
    var lifecycle: DownloadLifecycle
    /// Downloads by URL, for ``add(_:to:options:)`` to find an existing one; built on first use (a manager that only
    /// lists or edits a large queue never needs it).
    var idsByURL: [String: [DownloadID]]?
    var reservations = DestinationReservations()
    var jobs: [DownloadID: RunningJob] = [:]
    /// Jobs waiting for a slot again (``DownloadLifecycle/slotNeeded(_:)``), resumed by `grantSlot` or `stop`.
    var slotWaiters: [DownloadID: CheckedContinuation<Void, Never>] = [:]
    /// Why removing a running download could not delete its files, kept for the caller of ``remove(_:deletingFiles:)``.
    var removalFailures: [DownloadID: DownloadError] = [:]
    var watcher: ChangeWatcher
    var watcherTask: Task<Void, Never>?

    /// What every job is given: made on the first start, then shared (one per job was an object and four closures).
    lazy var jobEnvironment = JobEnvironment(
        session: session, store: store, events: hub, settings: engineSettings, globalLimiter: globalLimiter,
        widenClaim: { [store, pacer = session.pacer, limit = configuration.maxConnectionsPerHost] id, host, wanted in
            // A host that throttled gets no more connections than its backoff allows.
            let allowed = min(wanted, pacer.connectionCap(host) ?? wanted)
            return store.widenClaim(id, share: HostShare(host: host, wanted: allowed, limit: limit))
        },
        urlProvider: configuration.urlProvider, finishing: finishing, recorder: recorder,
        finishingStarts: { [weak self] id, heldBytes in await self?.jobFinishing(id, holding: heldBytes) },
        slotNeeded: { [weak self] id in await self?.jobNeedsSlot(id) },
        spaceWait: { [weak self] id, shortage in await self?.jobWaitsForSpace(id, shortage) },
        hostWaitStarts: { [weak self] id, host, wait in await self?.jobWaitsForHost(id, host: host, for: wait) ?? false
        },
        reserveDestination: { [weak self] id, directory, name, replacing, journal throws(DownloadError) in
            guard let self else { throw .internalError("the manager is gone") }
            return try await self.reserveDestination(
                for: id, in: directory, name: name, replacing: replacing, journal: journal)
        })

    struct RunningJob {
        let task: Task<Void, Never>
        let state: TransferState
        let limiter: RateLimiter
        /// Whether its `running` state is in the database: it is recorded once per
        /// ``Configuration/externalChangeInterval`` for the jobs still running, so a small download never writes it.
        var runningRecorded = false
    }

    /// Opens a manager on `store`, made for `configuration` (see `DownloadManager+Store.swift`), and, if
    /// `resumesStoredDownloads`, continues its downloads.
    init(opened configuration: Configuration, store: any DownloadStore) async throws(DownloadError) {
        try Self.checkLimits(configuration)
        self.configuration = configuration
        ownerText =
            configuration.ownsItsDownloads ? ForegroundOwner.current(label: configuration.ownerLabel).text : nil
        engineSettings = configuration.engineSettings
        self.store = store
        // Before anything is written: a change made while the manager opens (a download started again) is reported.
        eventOutbox = configuration.eventTargets.isEmpty ? nil : try store.enableOutbox(for: configuration.eventTargets)
        let transport = try HTTPTransport.shared(
            connectTimeout: configuration.connectTimeout, stallTimeout: configuration.stallTimeout,
            maxConnectionsPerHost: configuration.maxConnectionsPerHost, proxy: configuration.proxy,
            tls: configuration.tls, addressFamily: configuration.addressFamily)
        session = HTTPSession(
            transport: transport, netrc: configuration.netrc, cookies: configuration.cookies,
            gate: HostGate(policy: configuration.retry, clock: configuration.clock),
            pacer: HostPacer(
                pacing: configuration.requestPacing, maxConnections: configuration.maxConnectionsPerHost,
                shared: store.sharedHostBudget, clock: configuration.clock))
        globalLimiter = RateLimiter(bytesPerSecond: configuration.globalSpeedLimit, clock: configuration.tickClock)
        for (host, limit) in configuration.hostSpeedLimits {
            guard limit > 0 else { throw .invalidRequest("the speed limit for \(host) must be positive, got \(limit)") }
            hostLimiters[host.lowercased()] = RateLimiter(bytesPerSecond: limit, clock: configuration.tickClock)
        }
        finishing = FinishingQueue(store: store, listings: reservations.listings)
        recorder = TransferRecorder { [store] records throws(DownloadError) in try store.saveTransfers(records) }
        lifecycle = DownloadLifecycle(
            rules: .init(
                runsDownloads: configuration.runsDownloads,
                resumesStoredDownloads: configuration.resumesStoredDownloads,
                maxConcurrentDownloads: configuration.maxConcurrentDownloads,
                ownsItsDownloads: configuration.ownsItsDownloads))
        watcher = ChangeWatcher(store: store)

        // Records go straight from the store into the table (never all in an array beside it: a queue of 100,000),
        // kept in local variables until all are read: each access to the actor's own was checked at run time (3% of
        // a start-up). No index by URL is kept yet (it is made when first needed).
        let keepsHistory = configuration.keepsHistoryInMemory
        let count = try keepsHistory ? store.count() : store.unfinishedCount()
        let history = keepsHistory ? 0 : try store.count() - count
        historyOnDisk = history > 0
        var table = RecordTable()
        table.reserveCapacity(count)
        var held = reservations
        lifecycle.reserveCapacity(count)
        var loaded: [(id: DownloadID, state: DownloadState, priority: Int, owner: String?)] = []
        loaded.reserveCapacity(count)
        let load = { (record: DownloadRecord) in
            Self.remember(record, in: &table, holding: &held)
            loaded.append((record.downloadID, record.state, record.options.priority, record.owner))
        }
        if keepsHistory { try store.forEachRecord(load) } else { try store.forEachUnfinishedRecord(load) }
        records = table
        reservations = held
        let claimedElsewhere = store.claimedElsewhere(loaded.filter { $0.state == .running }.map(\.id))
        var actions: [DownloadLifecycle.Action] = []
        var owners = OwnerLiveness(me: ownerText)
        for (id, state, priority, owner) in loaded {
            let ownership = state == .queued || state == .running ? owners.ownership(owner) : owners.recorded(owner)
            actions += lifecycle.load(
                id, recorded: state, priority: priority, claimedElsewhere: claimedElsewhere.contains(id),
                owner: ownership)
        }
        // The watcher read its token before the records were loaded: they hold everything up to it.
        viewToken = watcher.lastToken
        perform(Self.merged(actions))
        if configuration.runsDownloads { startWatching() }
        schedule()
    }

    // MARK: - Performing the lifecycle's actions

    /// What performing actions left to do: jobs to wait for, and the first file that could not be deleted.
    struct Performed {
        var stops: [DownloadID] = []
        var failure: DownloadError?
    }

    /// Performs `actions` in order.
    @discardableResult
    func perform(_ actions: [DownloadLifecycle.Action]) -> Performed {
        var performed = Performed()
        var claimed = store.claimsTogether ? claimTogether(actions) : [:]
        for action in actions {
            switch action {
            case .record(let ids, let state):
                record(ids, state)
            case .report(let id):
                guard let state = lifecycle.phase(of: id)?.state, records[id] != nil else { continue }
                records[id]?.state = state
                if let record = records[id] { hub.yield(id, .status(status(of: record))) }
            case .start(let id):
                start(id, claimed: claimed.removeValue(forKey: id))
            case .stop(let id, _):
                jobs[id]?.task.cancel()
                // A job waiting for a slot goes on to see that it is stopped.
                slotWaiters.removeValue(forKey: id)?.resume()
                performed.stops.append(id)
            case .grantSlot(let id):
                slotWaiters.removeValue(forKey: id)?.resume()
            case .forget(let ids, let deletingFiles):
                if let failure = forget(ids, deletingFiles: deletingFiles) {
                    performed.failure = performed.failure ?? failure
                }
            case .drop(let id):
                dropFromMemory(id)
            }
        }
        return performed
    }

    /// Performs `actions` and waits for the jobs they stop to end; returns the first file that could not be deleted.
    @discardableResult
    func performAndWait(_ actions: [DownloadLifecycle.Action]) async -> DownloadError? {
        let performed = perform(actions)
        var failure = performed.failure
        for id in performed.stops {
            if let job = jobs[id] { await job.task.value }
            if let removal = removalFailures.removeValue(forKey: id) { failure = failure ?? removal }
        }
        return failure
    }

    /// One `record` action per state for a batch of events (one transaction each).
    static func merged(_ actions: [DownloadLifecycle.Action]) -> [DownloadLifecycle.Action] {
        var byState: [DownloadState: [DownloadID]] = [:]
        var others: [DownloadLifecycle.Action] = []
        for action in actions {
            if case .record(let ids, let state) = action {
                byState[state, default: []] += ids
            } else {
                others.append(action)
            }
        }
        return DownloadState.allCases.compactMap { state in byState[state].map { .record($0, state) } } + others
    }

    /// Records downloads in `state` (one transaction) and reports it.
    private func record(_ ids: [DownloadID], _ state: DownloadState) {
        let now = Date()
        let changed = ids.compactMap { id -> DownloadRecord? in
            guard var record = records[id] else { return nil }
            record.state = state
            record.updatedAt = now
            if state != .failed { record.lastError = nil }
            if state == .completed { record.completedAt = record.completedAt ?? now }
            records[id] = record
            return record
        }
        do {
            try store.saveLifecycle(changed)
        } catch {
            configuration.logger.error(
                "cannot record states", metadata: ["downloads": "\(changed.map(\.downloadID))", "error": "\(error)"])
        }
        for record in changed { hub.yield(record.downloadID, .status(status(of: record))) }
    }

    // MARK: - Jobs

    /// Starts queued downloads while slots are free. A download whose host has no connection left goes back and
    /// frees its slot, so this goes on until every slot runs a job or nothing startable is queued.
    func schedule() {
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
            guard !starts.isEmpty else { return }
            let heldBack = lifecycle.heldBackCount
            perform(starts)
            guard lifecycle.heldBackCount > heldBack else { return }
        }
    }

    /// The lowercased host of a download's URL ("" if it has none), cached: the scheduler asks often.
    func hostKey(of record: DownloadRecord) -> String {
        if let known = hostKeys[record.downloadID] { return known }
        let host = Self.host(of: record)
        hostKeys[record.downloadID] = host
        return host
    }

    static func host(of record: DownloadRecord) -> String { URLHost.lowercased(in: record.url) }

    /// The claims of the downloads `actions` start, made together (a store across a network answers them in one
    /// round trip), except those that ``start(_:claimed:)`` settles without the store.
    private func claimTogether(_ actions: [DownloadLifecycle.Action]) -> [DownloadID: ClaimOutcome] {
        var requests: [(id: DownloadID, share: HostShare)] = []
        for case .start(let id) in actions {
            guard let record = records[id], !record.isDamaged else { continue }
            let host = hostKey(of: record)
            if busyHosts.contains(host) { continue }
            requests.append((id, HostShare(host: host, wanted: 1, limit: configuration.maxConnectionsPerHost)))
        }
        guard requests.count > 1 else { return [:] }
        return Dictionary(
            zip(requests.map(\.id), store.claim(requests, viewToken: viewToken)),
            uniquingKeysWith: { first, _ in first })
    }

    /// Starts a job for `id` once it is claimed (`claimed`: the outcome of a claim made together with others).
    private func start(_ id: DownloadID, claimed: ClaimOutcome? = nil) {
        guard var record = records[id], !record.isDamaged else { return claimRefused(id) }
        let host = hostKey(of: record)
        // One refusal a tick per host: the others of a busy host wait without asking the store. A claim made
        // together with others stands (a lease it took must be used or released).
        let outcome =
            claimed
            ?? (busyHosts.contains(host)
                ? .hostBusy
                : store.claim(
                    id, share: HostShare(host: host, wanted: 1, limit: configuration.maxConnectionsPerHost),
                    viewToken: viewToken))
        switch outcome {
        case .granted:
            break
        case .hostBusy:
            busyHosts.insert(host)
            perform(lifecycle.hostBusy(id))
            return
        case .refused:
            return claimRefused(id)
        }
        let now = Date()
        record.state = .running
        record.startedAt = record.startedAt ?? now
        record.updatedAt = now
        record.lastError = nil
        records[id] = record
        // With hooks or webhooks, `running` is recorded at once (not at the next tick), before the job can finish, so
        // that every start is in the outbox: a download shorter than a tick would go from queued to completed.
        var recordedRunning = false
        if eventOutbox != nil {
            do {
                try store.recordRunning([record])
                recordedRunning = true
            } catch {
                configuration.logger.error("cannot record a running download", metadata: ["error": "\(error)"])
            }
        }

        let state = TransferState(.init(written: record.transfer.durableBytes, total: record.transfer.totalBytes))
        let limiter = RateLimiter(bytesPerSecond: record.options.speedLimit, clock: configuration.tickClock)
        let limiterOfHost = host.isEmpty ? nil : hostLimiter(host)
        let task = Task { [record, environment = jobEnvironment] in
            var job = DownloadJob(
                record: record, state: state, limiter: limiter, host: host, hostLimiter: limiterOfHost,
                environment: environment)
            let outcome = await job.run()
            self.jobEnded(id, outcome)
        }
        jobs[id] = RunningJob(task: task, state: state, limiter: limiter)
        jobs[id]?.runningRecorded = recordedRunning
        hub.yield(id, .status(.running))
    }

    /// Another process runs the download (or it cannot run): show what the store records, and take over if its owner
    /// dies.
    private func claimRefused(_ id: DownloadID) {
        let stored = try? store.fetch(id)
        if let stored { replace(with: stored) }
        perform(lifecycle.claimFailed(id, recorded: stored?.state))
    }

    /// The job has its complete file: its slot goes to the next queued download while the file is finished.
    private func jobFinishing(_ id: DownloadID, holding heldBytes: Int64?) {
        guard lifecycle.finishingStarted(id, holding: heldBytes) else { return }
        slotGivenBack(id)
    }

    /// The job gave its slot back (it holds no connection): the next queued download takes it.
    func slotGivenBack(_ id: DownloadID) {
        guard store.claimsTogether else { return schedule() }
        // Later, once the jobs that finished meanwhile have given their slots too: their hosts' connections are
        // given back together, and the next downloads claimed together.
        connectionsDone.append(id)
        guard connectionsDone.count == 1 else { return }
        Task {
            store.connectionsDone(connectionsDone)
            connectionsDone = []
            schedule()
        }
    }

    /// Returns once the job, which gave its slot back, has one again.
    func jobNeedsSlot(_ id: DownloadID) async {
        // A job back from waiting for its host ends the host's hold: its queued downloads may start again.
        let released = hostWaitEnded(id)
        guard !lifecycle.slotNeeded(id) else {
            if released { schedule() }
            return
        }
        await withCheckedContinuation { slotWaiters[id] = $0 }
    }

    private func jobEnded(_ id: DownloadID, _ outcome: DownloadJob.Outcome) {
        hostWaitEnded(id)
        // Release the claim only once the outcome is in the database, so no other process takes over a download
        // that was just paused or finished.
        guard jobs.removeValue(forKey: id) != nil, var record = records[id] else {
            store.release(id)
            return
        }
        let host = hostKey(of: record)
        // The job's columns come back whole, and the fingerprint of a file it put in place; the life-cycle columns
        // are ours.
        record.destinationPath = outcome.record.destinationPath
        record.transfer = outcome.record.transfer
        record.fingerprint = outcome.record.fingerprint
        let ending: DownloadLifecycle.Ending
        switch outcome {
        case .completed(let finished):
            record.completedAt = finished.completedAt ?? Date()
            record.updatedAt = finished.updatedAt
            ending = .completed(recorded: finished.state == .completed)
        case .failed(_, let error):
            record.lastError = error
            configuration.logger.info("download failed", metadata: ["download": "\(id)", "error": "\(error)"])
            ending = .failed
        case .stopped:
            ending = .stopped
        }
        records[id] = record
        let actions = lifecycle.jobEnded(id, ending)
        if lifecycle.phase(of: id) == .completed { records[id]?.state = .completed }
        if let failure = perform(actions).failure {
            removalFailures[id] = failure
            // Kept because a file could not be deleted: stopped, not running, so it can be removed again.
            perform(lifecycle.removalFailed(id))
        }
        store.release(id)
        // Its connections are free again: downloads of its host held back here may take them at once.
        if busyHosts.remove(host) != nil {
            lifecycle.releaseHeldBack(count: configuration.maxConcurrentDownloads)
        }
        schedule()
    }

    // MARK: - Records

    func remember(_ record: DownloadRecord) {
        Self.remember(record, in: &records, holding: &reservations)
        idsByURL?[ResourceKey.of(record.url), default: []].append(record.downloadID)
    }

    /// Puts `record` in `table` and holds its destination in `reservations`.
    private static func remember(
        _ record: DownloadRecord, in table: inout RecordTable, holding reservations: inout DestinationReservations
    ) {
        table[record.downloadID] = record
        if let path = record.destinationPath { reservations.hold(path, for: record.downloadID) }
    }

    /// Takes the stored view of a download this manager is not running.
    func replace(with stored: DownloadRecord) {
        let id = stored.downloadID
        guard let current = records[id] else { return remember(stored) }
        records[id] = stored
        if stored.url != current.url { hostKeys[id] = nil }
        if let path = stored.destinationPath, path != current.destinationPath { reservations.hold(path, for: id) }
    }

    func existing(_ id: DownloadID) throws(DownloadError) -> DownloadRecord {
        guard let record = records[id] ?? loadHistory(id) else { throw .unknownDownload(id) }
        return record
    }

    func ensureRunning() throws(DownloadError) {
        if lifecycle.isShutDown { throw .invalidRequest("the download manager has been shut down") }
    }

    /// Deletes the downloads' partial data (and completed files if asked) and forgets them in one transaction;
    /// one whose file cannot be deleted is kept. Returns the first error.
    private func forget(_ ids: [DownloadID], deletingFiles: Bool) -> DownloadError? {
        var forgotten: [DownloadID] = []
        var failure: DownloadError?
        for id in ids {
            guard let record = records[id] else { continue }
            do throws(DownloadError) {
                if let partPath = record.partPath { try FileSystem.removeFile(partPath) }
                if let journalPath = record.journalPath { try FileSystem.removeFile(journalPath) }
                if deletingFiles, lifecycle.phase(of: id) == .completed, let path = record.destinationPath {
                    try FileSystem.removeFile(path)
                }
                forgotten.append(id)
            } catch {
                failure = failure ?? error
            }
        }
        do {
            try store.delete(forgotten)
        } catch {
            return error
        }
        for id in forgotten { dropFromMemory(id) }
        return failure
    }

    private func dropFromMemory(_ id: DownloadID) {
        lifecycle.forgotten([id])
        guard let record = records.removeValue(forKey: id) else { return }
        hostKeys[id] = nil
        idsByURL?[ResourceKey.of(record.url)]?.removeAll { $0 == id }
        if let path = record.destinationPath { reservations.release(path, of: id) }
        hub.yield(id, .status(.removed))
    }

    /// Picks a free name in `directory` for `name` (`name (1).ext`, …) and reserves it for the download.
    private func reserveDestination(
        for id: DownloadID, in directory: String, name: String, replacing: Bool, journal: Bool
    ) throws(DownloadError)
        -> String
    {
        guard records[id] != nil else { throw .unknownDownload(id) }
        let path = reservations.reserve(
            name, in: directory, for: id, replacingFiles: replacing, journal: journal
        ) { [records] holder in
            records[holder]?.state != .completed
        }
        // The job records it with the rest of its columns.
        records[id]?.destinationPath = path
        return path
    }
}
