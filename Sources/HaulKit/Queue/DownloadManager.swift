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
    /// Hosts whose connections other workers hold, until a give-back here, a retry (``retryBusyHostsSoon()``) or the
    /// next tick: their downloads wait without a claim.
    var busyHosts: Set<String> = []
    /// Whether a retry of the busy hosts is pending (``retryBusyHostsSoon()``), and how long the next one waits.
    var busyRetryPending = false
    var busyRetryDelay = DownloadManager.busyHostRetry
    /// Hosts that hold their downloads (a `Retry-After`, a spent request budget), with the jobs waiting for them off
    /// their slots: the hosts' queued downloads wait until the first of those jobs takes a slot again (see
    /// `DownloadManager+Politeness.swift`).
    var heldHosts: [String: Set<DownloadID>] = [:]
    /// Finishing downloads whose connections are still counted in a store that claims together, and whose slots the
    /// next ``schedule()`` (queued behind the calls waiting for this actor) gives out; see `jobFinishing`.
    var connectionsDone: [DownloadID] = []
    /// Whether a round of ``slotGivenBack(_:)`` (connections given back, then the next claims) is awaiting the store:
    /// the slots given back meanwhile wait for the next round, together.
    var givingBackSlots = false
    /// How many times this manager gave connections back to the store (a job's claim released, finished jobs'
    /// connections given back): a `hostBusy` answer to a claim sent before the last of them may be stale.
    var connectionsFreed = 0
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
    /// Downloads by URL and destination, for ``add(_:to:options:)`` to find an existing one; built on first use (a
    /// manager that only lists or edits a large queue never needs it).
    var requestIndex: RequestIndex?
    /// The owner text last shown in a snapshot, and how it is shown (``shownOwner(_:)``).
    var lastShownOwner: (text: String, shown: String)?
    var reservations = DestinationReservations()
    var jobs: [DownloadID: RunningJob] = [:]
    /// Calls waiting for a download's job to end (``jobSettled(_:)``), resumed once its end is recorded.
    var jobEndWaiters: [DownloadID: [CheckedContinuation<Void, Never>]] = [:]
    /// Downloads whose job has ended and whose end is being recorded (``endJob(_:_:started:)``).
    var endingJobs: Set<DownloadID> = []
    /// Jobs waiting for a slot again (``DownloadLifecycle/slotNeeded(_:)``), resumed by `grantSlot` or `stop`.
    var slotWaiters: [DownloadID: CheckedContinuation<Void, Never>] = [:]
    /// Why removing a running download could not delete its files, kept for the caller of ``remove(_:deletingFiles:)``.
    var removalFailures: [DownloadID: DownloadError] = [:]
    var watcher: ChangeWatcher
    var watcherTask: Task<Void, Never>?
    /// Follows other processes' downloads while nothing runs here (``followOthersWhileIdle()``).
    var followingOthers: Task<Void, Never>?
    /// Downloads whose start awaits its claim, with the calls waiting for it to settle (``startSettled(_:)``).
    var startsInFlight: [DownloadID: [CheckedContinuation<Void, Never>]] = [:]
    /// Queued downloads claimed ahead of their start (``DownloadStore/claimsAhead``), with the claim's outcome and
    /// when it was taken: a start within ``claimAheadLifetime`` needs no claim of its own. Given back at the next look
    /// at the store, if not started by then.
    var claimedAhead: [DownloadID: (outcome: ClaimOutcome, at: ContinuousClock.Instant)] = [:]
    /// Whether ``reconcile()`` is looking at the store now.
    var reconciling = false
    /// Records a look read while they changed here (its view of them was older): the next look reads them again.
    var setAsideByLook: Set<DownloadID> = []
    /// States recorded here and not yet reported (their write awaited), and those waiting until all are: the
    /// events end only after them (``shutdown()``).
    var reportsInFlight = 0
    var reportWaiters: [CheckedContinuation<Void, Never>] = []
    /// Whether a batch is being added, and the batches waiting for their turn (``addingTurn()``).
    var addingBatch = false
    var addingWaiters: [CheckedContinuation<Void, Never>] = []

    /// What every job is given: made on the first start, then shared. Its host holds the manager weakly (the
    /// manager holds the environment).
    lazy var jobEnvironment = JobEnvironment(
        session: session, store: store, host: ManagerJobHost(self), settings: engineSettings,
        globalLimiter: globalLimiter, urlProvider: configuration.urlProvider, finishing: finishing, recorder: recorder)

    /// Opens a manager on `store`, made for `configuration` (see `DownloadManager+Store.swift`), and, if
    /// `resumesStoredDownloads`, continues its downloads.
    init(opened configuration: Configuration, store: any DownloadStore) async throws(DownloadError) {
        try Self.checkLimits(configuration)
        self.configuration = configuration
        ownerText =
            configuration.ownsItsDownloads ? ForegroundOwner.current(label: configuration.ownerLabel).text : nil
        var settings = configuration.engineSettings
        // Downloads keep room on the state database's file system too: their ends are recorded there.
        settings.freeSpace.stateDirectory = store.stateDirectory
        engineSettings = settings
        self.store = store
        // Before anything is written: a change made while the manager opens (a download started again) is reported.
        eventOutbox =
            configuration.eventTargets.isEmpty ? nil : try await store.enableOutbox(for: configuration.eventTargets)
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
        recorder = TransferRecorder { [store] records throws(DownloadError) in try await store.saveTransfers(records) }
        lifecycle = DownloadLifecycle(
            rules: .init(
                runsDownloads: configuration.runsDownloads,
                resumesStoredDownloads: configuration.resumesStoredDownloads,
                maxConcurrentDownloads: configuration.maxConcurrentDownloads,
                ownsItsDownloads: configuration.ownsItsDownloads))
        watcher = await ChangeWatcher(store: store)

        // Records go straight from the store into the table (never all in an array beside it: a queue of 100,000),
        // kept in local variables until all are read: each access to the actor's own was checked at run time (3% of
        // a start-up). No index by URL is kept yet (it is made when first needed).
        let keepsHistory = configuration.keepsHistoryInMemory
        let count = try await keepsHistory ? store.count() : store.unfinishedCount()
        let history = keepsHistory ? 0 : try await store.count() - count
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
        if keepsHistory { try await store.forEachRecord(load) } else { try await store.forEachUnfinishedRecord(load) }
        records = table
        reservations = held
        let claimedElsewhere = await store.claimedElsewhere(loaded.filter { $0.state == .running }.map(\.id))
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
        await perform(Self.merged(actions))
        if configuration.runsDownloads { startWatching() }
        await schedule()
    }

    // MARK: - Performing the lifecycle's actions

    /// What performing actions left to do: jobs to wait for, and the first file that could not be deleted.
    struct Performed {
        var stops: [DownloadID] = []
        var failure: DownloadError?
    }

    /// Performs `actions` in order.
    ///
    /// The store is awaited, so other calls may run on this actor meanwhile. The lifecycle changed its state when it
    /// returned `actions` (before any await), and each action updates ``records`` before it awaits the store: a call
    /// that runs in between sees the new state. A start that a pause, removal or shutdown overtook while its claim
    /// was awaited is settled in ``start(_:claimed:)``.
    @discardableResult
    func perform(_ actions: [DownloadLifecycle.Action]) async -> Performed {
        var performed = Performed()
        let freedBefore = connectionsFreed
        var claimed = store.claimsTogether ? await claimTogether(actions) : [:]
        for action in actions {
            switch action {
            case .record(let ids, let state):
                await record(ids, state)
            case .report(let id):
                guard let state = lifecycle.phase(of: id)?.state,
                    let status = records.modify(
                        id,
                        { record in
                            record.state = state
                            return Self.status(of: record)
                        })
                else { continue }
                hub.yield(id, .status(status))
            case .start(let id):
                await start(id, claimed: claimed.removeValue(forKey: id), freedBefore: freedBefore)
            case .stop(let id, _):
                jobs[id]?.task.cancel()
                // A job waiting for a slot goes on to see that it is stopped.
                slotWaiters.removeValue(forKey: id)?.resume()
                performed.stops.append(id)
            case .grantSlot(let id):
                slotWaiters.removeValue(forKey: id)?.resume()
            case .forget(let ids, let deletingFiles):
                if let failure = await forget(ids, deletingFiles: deletingFiles) {
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
        let performed = await perform(actions)
        var failure = performed.failure
        for id in performed.stops {
            // A job still being started (its claim awaited) is waited for too: its start settles first.
            await startSettled(id)
            await jobSettled(id)
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
    private func record(_ ids: [DownloadID], _ state: DownloadState) async {
        // The state is seen here at once (a wait returns on it) and reported once written: until then, the events
        // must not end.
        reportsInFlight += 1
        defer {
            reportsInFlight -= 1
            if reportsInFlight == 0 {
                for waiter in reportWaiters { waiter.resume() }
                reportWaiters = []
            }
        }
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
            try await store.saveLifecycle(changed)
        } catch {
            configuration.logger.error(
                "cannot record states", metadata: ["downloads": "\(changed.map(\.downloadID))", "error": "\(error)"])
        }
        for record in changed { hub.yield(record.downloadID, .status(Self.status(of: record))) }
    }

    // MARK: - Records

    /// Remembers `record`; `requestKey` is its ``RequestIndex/key(url:destination:)`` if already known.
    func remember(_ record: DownloadRecord, requestKey: String? = nil) {
        Self.remember(record, in: &records, holding: &reservations)
        requestIndex?.insert(record, key: requestKey)
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
        if stored.url != current.url || stored.requestedDestination != current.requestedDestination {
            // A freshly signed URL taken elsewhere, or a row read again whole (damaged, or no longer): found by it.
            requestIndex?.remove(current)
            requestIndex?.insert(stored)
        }
        if let path = stored.destinationPath, path != current.destinationPath { reservations.hold(path, for: id) }
    }

    func existing(_ id: DownloadID) async throws(DownloadError) -> DownloadRecord {
        if let record = records[id] { return record }
        guard let record = await loadHistory(id) else { throw .unknownDownload(id) }
        return record
    }

    func ensureRunning() throws(DownloadError) {
        if lifecycle.isShutDown { throw .invalidRequest("the download manager has been shut down") }
    }

    /// Deletes the downloads' partial data (and completed files if asked) and forgets them in one transaction;
    /// one whose file cannot be deleted is kept. Returns the first error.
    private func forget(_ ids: [DownloadID], deletingFiles: Bool) async -> DownloadError? {
        var forgotten: [DownloadID] = []
        var failure: DownloadError?
        for id in ids {
            guard let record = records[id] else { continue }
            do throws(DownloadError) {
                if let partPath = record.partPath { try FileSystem.removeFile(partPath) }
                if let journalPath = record.journalPath { try FileSystem.removeFile(journalPath) }
                if deletingFiles, lifecycle.phase(of: id) == .completed, let path = record.destinationPath {
                    try Self.deleteCompletedFile(at: path, of: record)
                }
                forgotten.append(id)
            } catch {
                failure = failure ?? error
            }
        }
        do {
            try await store.delete(forgotten)
        } catch {
            return error
        }
        // Dropped once the records are deleted (a failed delete keeps them); one already dropped meanwhile is skipped.
        for id in forgotten { dropFromMemory(id) }
        return failure
    }

    /// Deletes a completed download's file, unless it changed since Haul put it there (another size, time or inode:
    /// the user's file now, which `--delete-file` must not take with it). A file already gone is nothing to delete.
    private static func deleteCompletedFile(at path: String, of record: DownloadRecord) throws(DownloadError) {
        if let fingerprint = record.fingerprint {
            switch fingerprint.compare(withFileAt: path) {
            case .unchanged: break
            case .missing: return
            case let comparison:
                throw .changedFileNotDeleted(path: path, how: fingerprint.describe(comparison), id: record.downloadID)
            }
        }
        try FileSystem.removeFile(path)
    }

    private func dropFromMemory(_ id: DownloadID) {
        lifecycle.forgotten([id])
        guard let record = records.removeValue(forKey: id) else { return }
        hostKeys[id] = nil
        requestIndex?.remove(record)
        if let path = record.destinationPath { reservations.release(path, of: id) }
        hub.yield(id, .status(.removed))
    }

}
