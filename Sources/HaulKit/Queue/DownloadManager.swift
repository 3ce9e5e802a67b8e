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
public actor DownloadManager {
    public nonisolated let configuration: Configuration

    private let store: DownloadStore
    private let transport: HTTPTransport
    private let hub = EventHub()
    private let globalLimiter: RateLimiter
    /// Moves finished files into place in groups (internal for tests).
    nonisolated let finishing: FinishingQueue
    private var records: [DownloadID: DownloadRecord] = [:]
    /// Downloads by URL, for ``add(_:to:options:)`` to find an existing one; built on first use (a manager that only
    /// lists or edits a large queue never needs it).
    private var idsByURL: [String: [DownloadID]]?
    private var reservedPaths: [String: DownloadID] = [:]
    private var queue = DownloadQueue()
    private var jobs: [DownloadID: RunningJob] = [:]
    private var isShutDown = false
    /// Downloads added or resumed through this manager: it runs them even when it holds stored ones back.
    private var adopted: Set<DownloadID> = []
    /// Downloads this manager would run but another process is running; taken over if that process dies.
    private var heldElsewhere: Set<DownloadID> = []
    /// Why removing a running download could not delete its files, kept for the caller of ``remove(_:deletingFiles:)``.
    private var removalFailures: [DownloadID: DownloadError] = [:]
    private var watcher: Task<Void, Never>?
    private var lastDataVersion: Int?
    private var lastReconciled = Date()

    private struct RunningJob {
        let task: Task<Void, Never>
        let state: TransferState
        let limiter: RateLimiter
        var stopReason: StopReason?
        /// Whether its `running` state is in the database: it is recorded once per
        /// ``Configuration/externalChangeInterval`` for the jobs still running, so a small download never writes it.
        var runningRecorded = false
    }

    private enum StopReason {
        case pause
        case remove(deletingFile: Bool)
        case shutdown
    }

    /// Opens the state database (creating it if needed) and, if `resumesStoredDownloads`, continues its downloads.
    public init(configuration: Configuration = Configuration()) async throws(DownloadError) {
        guard configuration.maxConcurrentDownloads >= 1, configuration.maxConnectionsPerHost >= 1 else {
            throw .invalidRequest("maxConcurrentDownloads and maxConnectionsPerHost must be at least 1")
        }
        self.configuration = configuration
        store = try SQLiteDownloadStore(path: configuration.databaseURL.path)
        transport = HTTPTransport.shared(
            connectTimeout: configuration.connectTimeout, stallTimeout: configuration.stallTimeout,
            maxConnectionsPerHost: configuration.maxConnectionsPerHost)
        globalLimiter = RateLimiter(bytesPerSecond: configuration.globalSpeedLimit)
        finishing = FinishingQueue(store: store)

        lastDataVersion = try? store.changeToken()
        lastReconciled = Date()
        let loaded = try store.fetchAll()
        records.reserveCapacity(loaded.count)
        for var record in loaded {
            let id = record.downloadID
            if record.state == .running {
                if store.isClaimedElsewhere(id) {
                    // Another live process is running it.
                    if wouldRun(id) { heldElsewhere.insert(id) }
                } else {
                    // The process that ran it stopped without pausing it: queue it to continue where it was.
                    record.state = .queued
                    try? store.saveLifecycle(record)
                }
            }
            remember(record, queueing: wouldRun(id))
        }
        if configuration.runsDownloads { startWatching() }
        schedule()
    }

    /// Whether this manager runs `id` when it is queued.
    private func wouldRun(_ id: DownloadID) -> Bool {
        configuration.runsDownloads && (configuration.resumesStoredDownloads || adopted.contains(id))
    }

    // MARK: - Adding

    /// Queues a download and returns its identifier at once.
    ///
    /// Adding the same URL with the same destination again returns the existing download (resuming it if it was
    /// paused or failed) instead of starting over.
    ///
    /// - Parameters:
    ///   - url: an `http` or `https` URL.
    ///   - destination: a file, or a directory to name the file in; nil for the download directory.
    @discardableResult
    public func add(_ url: URL, to destination: DownloadDestination? = nil, options: DownloadOptions = .init())
        throws(DownloadError) -> DownloadID
    {
        try add(contentsOf: [(url, destination, options)])[0]
    }

    /// Queues several downloads in one database transaction; returns their identifiers in order.
    @discardableResult
    public func add(contentsOf downloads: [(url: URL, destination: DownloadDestination?, options: DownloadOptions)])
        throws(DownloadError) -> [DownloadID]
    {
        try ensureRunning()
        var results: [DownloadID?] = []
        var fresh: [DownloadRecord] = []
        var freshPositions: [Int] = []
        var files: Set<String> = []
        for (url, destination, options) in downloads {
            try Self.validate(url)
            guard (1...32).contains(options.connections) else {
                throw .invalidRequest("connections must be 1 to 32, got \(options.connections)")
            }
            let resolved = resolve(destination)
            if case .file(let file) = resolved {
                // Two downloads never write one file: not two in this batch, nor one beside an unfinished other.
                guard files.insert(file.path).inserted else {
                    throw .invalidRequest("two downloads would write \(file.path): give each its own file")
                }
                if let holder = reservedPaths[file.path], let other = records[holder], other.url != url.absoluteString,
                    other.state != .completed
                {
                    throw .invalidRequest(
                        "download \(holder) already writes \(file.path): give this one another file, or remove it")
                }
            }
            if let existing = existingDownload(url: url.absoluteString, destination: resolved) {
                adopted.insert(existing)
                try? resume(existing)
                results.append(existing)
                continue
            }
            let now = Date()
            var record = DownloadRecord(
                url: url.absoluteString, requestedDestination: resolved, options: options, state: .queued,
                createdAt: now, updatedAt: now)
            if case .file(let file) = resolved { record.destinationPath = file.path }
            freshPositions.append(results.count)
            results.append(nil)
            fresh.append(record)
        }
        for (position, record) in zip(freshPositions, try store.insert(fresh)) {
            adopted.insert(record.downloadID)
            remember(record, queueing: configuration.runsDownloads)
            results[position] = record.downloadID
            hub.yield(record.downloadID, .added(snapshot(of: record)))
            hub.yield(record.downloadID, .status(.queued))
        }
        schedule()
        return results.map { $0! }
    }

    private static func validate(_ url: URL) throws(DownloadError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .invalidURL(url.absoluteString, reason: "only http and https are supported")
        }
        guard let host = url.host, !host.isEmpty else {
            throw .invalidURL(url.absoluteString, reason: "it has no host")
        }
    }

    private func resolve(_ destination: DownloadDestination?) -> DownloadDestination {
        let base = configuration.downloadDirectory
        switch destination {
        case nil:
            return .directory(base.standardizedFileURL)
        case .directory(let url):
            return .directory(absolute(url, base: base))
        case .file(let url):
            let file = absolute(url, base: base)
            if FileSystem.entry(at: file.path) == .directory { return .directory(file) }
            return .file(file)
        }
    }

    private func absolute(_ url: URL, base: URL) -> URL {
        let path = url.path
        if path.hasPrefix("/") { return URL(fileURLWithPath: path).standardizedFileURL }
        return base.appendingPathComponent(path).standardizedFileURL
    }

    private func urlIndex() -> [String: [DownloadID]] {
        if let idsByURL { return idsByURL }
        var index: [String: [DownloadID]] = [:]
        index.reserveCapacity(records.count)
        for id in records.keys.sorted() { index[records[id]!.url, default: []].append(id) }
        idsByURL = index
        return index
    }

    private func existingDownload(url: String, destination: DownloadDestination) -> DownloadID? {
        for id in urlIndex()[url] ?? [] {
            guard let record = records[id], record.requestedDestination == destination else { continue }
            if record.state == .completed {
                // Done before; only counts while its file is still there.
                guard let path = record.destinationPath, FileSystem.entry(at: path) != .none else { continue }
            }
            return id
        }
        return nil
    }

    // MARK: - Control

    /// Stops a download, keeping what it has; ``resume(_:)`` continues from there.
    public func pause(_ id: DownloadID) async throws(DownloadError) {
        try await pause([id])
    }

    /// Pauses several downloads; those not running in this manager are recorded in one transaction.
    ///
    /// Throws ``DownloadError/Code/unknownDownload`` before changing anything if an id is unknown.
    public func pause(_ ids: [DownloadID]) async throws(DownloadError) {
        for id in ids { _ = try existing(id) }
        var recorded: [DownloadID] = []
        var running: [DownloadID] = []
        for id in ids {
            switch records[id]?.state {
            case .running where jobs[id] != nil:
                running.append(id)
            case .running, .queued:
                // Running in another process: it sees the change in the database and stops.
                recorded.append(id)
            case .paused, .completed, .failed, nil:
                break
            }
        }
        setStates(recorded, .paused)
        for id in running { await stop(id, reason: .pause) }
    }

    /// Queues a paused or failed download again (or releases a held stored one); it continues from the bytes on
    /// disk.
    public func resume(_ id: DownloadID) throws(DownloadError) {
        try resume([id])
    }

    /// Queues several paused or failed downloads again, recording them in one transaction.
    ///
    /// Throws ``DownloadError/Code/unknownDownload`` before changing anything if an id is unknown.
    public func resume(_ ids: [DownloadID]) throws(DownloadError) {
        for id in ids where try existing(id).isDamaged {
            // Its row cannot be read: there is nothing to resume from.
            throw records[id]?.lastError ?? .damagedRecord(id, reason: "unreadable")
        }
        var recorded: [DownloadID] = []
        for id in ids {
            guard let record = records[id] else { continue }
            adopted.insert(id)
            switch record.state {
            case .paused, .failed:
                recorded.append(id)
            case .queued where !queue.contains(id) && jobs[id] == nil && configuration.runsDownloads:
                queue.insert(id, priority: record.options.priority)
            case .running where jobs[id] == nil && configuration.runsDownloads:
                // Recorded as running, but not here: follow it while its process lives, take it over if it died.
                if store.isClaimedElsewhere(id) {
                    heldElsewhere.insert(id)
                } else {
                    heldElsewhere.remove(id)
                    recorded.append(id)
                }
            case .queued, .running, .completed:
                break
            }
        }
        setStates(recorded, .queued)
        schedule()
    }

    /// Stops a download and deletes its partial data, forgetting it. A completed file is left in place.
    public func cancel(_ id: DownloadID) async throws(DownloadError) {
        try await remove(id, deletingFile: false)
    }

    /// Forgets a download, deleting its partial data; with `deletingFile`, also deletes the completed file.
    public func remove(_ id: DownloadID, deletingFile: Bool = false) async throws(DownloadError) {
        try await remove([id], deletingFiles: deletingFile)
    }

    /// Forgets several downloads (see ``remove(_:deletingFile:)``); those not running are recorded in one
    /// transaction.
    ///
    /// Throws ``DownloadError/Code/unknownDownload`` before changing anything if an id is unknown; if a file cannot be
    /// deleted, the others are still removed and the first such error is thrown.
    public func remove(_ ids: [DownloadID], deletingFiles: Bool = false) async throws(DownloadError) {
        for id in ids { _ = try existing(id) }
        let running = ids.filter { jobs[$0] != nil }
        var failure = forget(ids.filter { jobs[$0] == nil }, deletingFiles: deletingFiles)
        for id in running {
            await stop(id, reason: .remove(deletingFile: deletingFiles))
            if let removal = removalFailures.removeValue(forKey: id) { failure = failure ?? removal }
        }
        if let failure { throw failure }
    }

    /// Pauses every queued and running download.
    public func pauseAll() async {
        try? await pause(ids(in: [.queued, .running]))
    }

    /// Resumes every paused and failed download.
    public func resumeAll() {
        try? resume(ids(in: [.paused, .failed, .queued]).filter { records[$0]?.isDamaged == false })
    }

    /// Forgets every download, deleting partial data; with `deletingFiles`, completed files too.
    public func removeAll(deletingFiles: Bool = false) async {
        try? await remove(Array(records.keys).sorted(), deletingFiles: deletingFiles)
    }

    /// Changes a download's speed limit (bytes per second, nil for none), also while it runs.
    public func setSpeedLimit(_ bytesPerSecond: Int64?, for id: DownloadID) throws(DownloadError) {
        var record = try existing(id)
        if let bytesPerSecond, bytesPerSecond <= 0 { throw .invalidRequest("a speed limit must be positive") }
        record.options.speedLimit = bytesPerSecond
        record.updatedAt = Date()
        records[id] = record
        try store.saveSettings(record)
        jobs[id]?.limiter.setLimit(bytesPerSecond)
    }

    /// Changes the cap on all downloads together (bytes per second, nil for none), also while they run.
    public func setGlobalSpeedLimit(_ bytesPerSecond: Int64?) throws(DownloadError) {
        if let bytesPerSecond, bytesPerSecond <= 0 { throw .invalidRequest("a speed limit must be positive") }
        globalLimiter.setLimit(bytesPerSecond)
    }

    /// The current cap on all downloads together.
    public var globalSpeedLimit: Int64? { globalLimiter.limit }

    /// Checkpoints and stops running downloads without pausing them (a manager opened later continues them).
    /// The manager accepts no new work afterwards.
    public func shutdown() async {
        guard !isShutDown else { return }
        isShutDown = true
        watcher?.cancel()
        for id in Array(jobs.keys) { await stop(id, reason: .shutdown) }
        hub.finishAll()
    }

    // MARK: - Queries

    /// The state of one download, or nil if there is none with that id.
    public func snapshot(_ id: DownloadID) -> DownloadSnapshot? {
        records[id].map(snapshot(of:))
    }

    /// All downloads, oldest first, optionally only those in `states`.
    public func snapshots(in states: Set<DownloadState>? = nil) -> [DownloadSnapshot] {
        records.keys.sorted().compactMap { id in
            guard let record = records[id], states?.contains(record.state) ?? true else { return nil }
            return snapshot(of: record)
        }
    }

    /// The identifiers of the downloads in `states`, oldest first; cheaper than ``snapshots(in:)`` for a large queue.
    public func ids(in states: Set<DownloadState>) -> [DownloadID] {
        records.values.filter { states.contains($0.state) }.map(\.downloadID).sorted()
    }

    /// The state of one download, or nil if there is none with that id.
    public func state(of id: DownloadID) -> DownloadState? {
        records[id]?.state
    }

    /// How many downloads are in `states`; cheaper than ``snapshots(in:)`` for a large queue.
    public func count(in states: Set<DownloadState>) -> Int {
        records.values.reduce(0) { states.contains($1.state) ? $0 + 1 : $0 }
    }

    /// Every event of every download, from now on.
    public func events() -> AsyncStream<DownloadEvent> { hub.subscribe() }

    /// The events of one download, from now on; the stream ends when it completes, fails or is removed.
    public func events(for id: DownloadID) -> AsyncStream<DownloadEvent> { hub.subscribe(to: id) }

    /// Waits until a download completes and returns its file, or throws why it failed or was removed.
    public func wait(for id: DownloadID) async throws(DownloadError) -> URL {
        let stream = hub.subscribe(to: id)
        // Added by another process since the last look at the database.
        if records[id] == nil, let stored = try? store.fetch(id) { adopt(stored) }
        if let record = records[id] {
            switch record.state {
            case .completed: return URL(fileURLWithPath: record.destinationPath ?? "", isDirectory: false)
            case .failed: throw record.lastError ?? .internalError("failed without an error")
            case .queued, .running, .paused: break
            }
        } else {
            throw .unknownDownload(id)
        }
        for await event in stream {
            switch event.change {
            case .status(.completed(let file)): return file
            case .status(.failed(let error)): throw error
            case .status(.removed): throw .unknownDownload(id)
            default: continue
            }
        }
        throw .internalError("the manager shut down before download \(id) ended")
    }

    /// Adds a download and reports its progress and result through callbacks, like the classic delegate APIs.
    ///
    /// `progress` receives (bytes received, bytes expected or nil, fraction or nil) a few times a second;
    /// `completion` is called once with the file or the error. Both run on an unspecified task.
    @discardableResult
    public func download(
        _ url: URL, to destination: DownloadDestination? = nil, options: DownloadOptions = .init(),
        progress: @escaping @Sendable (_ received: Int64, _ expected: Int64?, _ fraction: Double?) -> Void,
        completion: @escaping @Sendable (Result<URL, DownloadError>) -> Void
    ) throws(DownloadError) -> DownloadID {
        let id = try add(url, to: destination, options: options)
        let stream = hub.subscribe(to: id)
        if let record = records[id], record.state == .completed, let path = record.destinationPath {
            completion(.success(URL(fileURLWithPath: path, isDirectory: false)))
            return id
        }
        Task {
            for await event in stream {
                switch event.change {
                case .progress(let value):
                    progress(value.receivedBytes, value.expectedBytes, value.fraction)
                case .status(.completed(let file)):
                    completion(.success(file))
                    return
                case .status(.failed(let error)):
                    completion(.failure(error))
                    return
                case .status(.removed):
                    completion(.failure(.unknownDownload(id)))
                    return
                default:
                    continue
                }
            }
        }
        return id
    }

    // MARK: - Scheduling

    private func schedule() {
        guard !isShutDown, configuration.runsDownloads else { return }
        while jobs.count < configuration.maxConcurrentDownloads, let id = queue.popFirst() {
            start(id)
        }
    }

    private func start(_ id: DownloadID) {
        // Never a second job for one download (its lock is per process: it would not keep this manager out).
        guard var record = records[id], jobs[id] == nil, !record.isDamaged else { return }
        guard store.claim(id) else {
            // Another process runs it: show what it records, and take over if it dies.
            heldElsewhere.insert(id)
            if let stored = try? store.fetch(id) { adopt(stored) }
            return
        }
        heldElsewhere.remove(id)
        let now = Date()
        record.state = .running
        record.startedAt = record.startedAt ?? now
        record.updatedAt = now
        record.lastError = nil
        records[id] = record

        let state = TransferState(.init(written: record.transfer.durableBytes, total: record.transfer.totalBytes))
        let limiter = RateLimiter(bytesPerSecond: record.options.speedLimit)
        let environment = JobEnvironment(
            transport: transport, store: store, events: hub, settings: configuration.engineSettings,
            globalLimiter: globalLimiter, finishing: finishing,
            reserveDestination: { [weak self] id, directory, name throws(DownloadError) in
                guard let self else { throw .internalError("the manager is gone") }
                return try await self.reserveDestination(for: id, in: directory, name: name)
            })
        let task = Task { [record] in
            var job = DownloadJob(record: record, state: state, limiter: limiter, environment: environment)
            let outcome = await job.run()
            self.jobEnded(id, outcome)
        }
        jobs[id] = RunningJob(task: task, state: state, limiter: limiter)
        hub.yield(id, .status(.running))
    }

    private func stop(_ id: DownloadID, reason: StopReason) async {
        guard let job = jobs[id] else { return }
        jobs[id]?.stopReason = reason
        job.task.cancel()
        await job.task.value
    }

    private func jobEnded(_ id: DownloadID, _ outcome: DownloadJob.Outcome) {
        // Release the lock only once the outcome is in the database, so no other process takes over a download that
        // was just paused or finished.
        guard let job = jobs.removeValue(forKey: id), var record = records[id] else {
            store.release(id)
            return
        }
        // Take the job's transfer columns; the life-cycle columns are ours.
        let transfer = outcome.record
        record.destinationPath = transfer.destinationPath
        record.transfer.hasPartData = transfer.transfer.hasPartData
        record.transfer.generation = transfer.transfer.generation
        record.transfer.durableBytes = transfer.transfer.durableBytes
        record.transfer.bootID = transfer.transfer.bootID
        record.transfer.etag = transfer.transfer.etag
        record.transfer.lastModified = transfer.transfer.lastModified
        record.transfer.totalBytes = transfer.transfer.totalBytes
        record.transfer.contentEncoding = transfer.transfer.contentEncoding
        record.transfer.finalURL = transfer.transfer.finalURL
        record.transfer.finalizing = transfer.transfer.finalizing
        record.transfer.segments = transfer.transfer.segments
        records[id] = record

        switch (outcome, job.stopReason) {
        case (.completed, .remove(let deletingFile)):
            // Finished just as it was removed: the file is complete, so only `deletingFile` deletes it.
            records[id]?.state = .completed
            removalFailures[id] = forget([id], deletingFiles: deletingFile)
        case (_, .remove(let deletingFile)):
            removalFailures[id] = forget([id], deletingFiles: deletingFile)
            // Kept because a file could not be deleted: stopped, not running, so it can be removed again.
            if removalFailures[id] != nil { setState(id, .paused) }
        case (.completed(_, let file), _):
            // The finishing queue recorded it completed once the file was in place.
            record.completedAt = transfer.completedAt ?? Date()
            records[id] = record
            if transfer.state == .completed, changeState(id, to: .completed) != nil {
                hub.yield(id, .status(.completed(file: file)))
            } else {
                setState(id, .completed, status: .completed(file: file))
            }
        case (.failed(_, let error), _):
            record.lastError = error
            records[id] = record
            configuration.logger.info("download failed", metadata: ["download": "\(id)", "error": "\(error)"])
            setState(id, .failed, status: .failed(error))
        case (.stopped, .pause):
            setState(id, .paused)
        case (.stopped, .shutdown):
            break
        case (.stopped, nil):
            // Stopped without being asked (the task was cancelled from outside): keep it resumable.
            setState(id, .paused)
        }
        store.release(id)
        schedule()
    }

    // MARK: - Records

    private func remember(_ record: DownloadRecord, queueing: Bool = true) {
        let id = record.downloadID
        records[id] = record
        idsByURL?[record.url, default: []].append(id)
        if let path = record.destinationPath { reservedPaths[path] = id }
        if record.state == .queued, queueing { queue.insert(id, priority: record.options.priority) }
    }

    private func existing(_ id: DownloadID) throws(DownloadError) -> DownloadRecord {
        guard let record = records[id] else { throw .unknownDownload(id) }
        return record
    }

    private func ensureRunning() throws(DownloadError) {
        if isShutDown { throw .invalidRequest("the download manager has been shut down") }
    }

    private func setState(_ id: DownloadID, _ state: DownloadState, status: DownloadStatus? = nil) {
        guard let record = changeState(id, to: state) else { return }
        persist([record])
        hub.yield(id, .status(status ?? self.status(of: record)))
    }

    /// ``setState(_:_:status:)`` for several downloads, recorded in one transaction.
    private func setStates(_ ids: [DownloadID], _ state: DownloadState) {
        let changed = ids.compactMap { changeState($0, to: state) }
        persist(changed)
        for record in changed { hub.yield(record.downloadID, .status(status(of: record))) }
    }

    /// Changes a download's state in memory and in the queue; returns the record to store.
    private func changeState(_ id: DownloadID, to state: DownloadState) -> DownloadRecord? {
        guard var record = records[id] else { return nil }
        record.state = state
        record.updatedAt = Date()
        if state != .failed { record.lastError = nil }
        records[id] = record
        if state == .queued {
            queue.insert(id, priority: record.options.priority)
        } else {
            queue.remove(id)
        }
        return record
    }

    private func persist(_ changed: [DownloadRecord]) {
        do {
            try store.saveLifecycle(changed)
        } catch {
            configuration.logger.error(
                "cannot record states", metadata: ["downloads": "\(changed.map(\.downloadID))", "error": "\(error)"])
        }
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
                if deletingFiles, record.state == .completed, let path = record.destinationPath {
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
        guard let record = records.removeValue(forKey: id) else { return }
        queue.remove(id)
        heldElsewhere.remove(id)
        idsByURL?[record.url]?.removeAll { $0 == id }
        if let path = record.destinationPath, reservedPaths[path] == id { reservedPaths[path] = nil }
        hub.yield(id, .status(.removed))
    }

    /// Picks a free name in `directory` for `name` (`name (1).ext`, …) and reserves it for the download.
    private func reserveDestination(for id: DownloadID, in directory: String, name: String) throws(DownloadError)
        -> String
    {
        guard var record = records[id] else { throw .unknownDownload(id) }
        var candidate = name
        var number = 0
        while true {
            let path = (directory as NSString).appendingPathComponent(candidate)
            // The name and the files beside it (part file, journal) must all be free.
            let taken =
                FileSystem.entry(at: path) != .none || FileSystem.entry(at: path + partFileSuffix) != .none
                || FileSystem.entry(at: path + longestSiblingSuffix) != .none
                || (reservedPaths[path].map { $0 != id && records[$0]?.state != .completed } ?? false)
            if !taken {
                // The job records it with the rest of its columns.
                record.destinationPath = path
                records[id] = record
                reservedPaths[path] = id
                return path
            }
            number += 1
            candidate = FileNamer.alternative(name, number: number)
        }
    }

    // MARK: - Other processes

    private func startWatching() {
        let interval = configuration.externalChangeInterval
        watcher = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                await self.reconcile()
            }
        }
    }

    /// Applies what other processes changed in the database, and takes over downloads whose process died.
    private func reconcile() async {
        guard !isShutDown else { return }
        recordRunning()
        if let version = try? store.changeToken(), version != lastDataVersion {
            lastDataVersion = version
            // A margin, so a write committed while the last look ran is not missed.
            let since = lastReconciled.addingTimeInterval(-2)
            lastReconciled = Date()
            for stored in (try? store.fetchUpdated(since: since)) ?? [] {
                await applyExternal(stored)
            }
            if let count = try? store.count(), count != records.count, let ids = try? store.fetchIDs() {
                for id in Array(records.keys) where !ids.contains(id) {
                    if jobs[id] != nil {
                        await stop(id, reason: .remove(deletingFile: false))
                        removalFailures[id] = nil
                    } else {
                        dropFromMemory(id)
                    }
                }
            }
        }
        for id in heldElsewhere {
            guard jobs[id] == nil, let record = records[id], record.state == .queued || record.state == .running else {
                heldElsewhere.remove(id)
                continue
            }
            guard !store.isClaimedElsewhere(id) else { continue }
            heldElsewhere.remove(id)
            // The lock is free: the other process ended. Take over only what it left unfinished.
            guard let stored = try? store.fetch(id) else {
                dropFromMemory(id)
                continue
            }
            guard stored.state == .queued || stored.state == .running else {
                adopt(stored)
                continue
            }
            records[id] = stored
            if stored.state == .running { setState(id, .queued) } else { queue.insert(id, priority: stored.options.priority) }
        }
        schedule()
    }

    /// Records `running` for the jobs started since the last tick that still run. Only rows still `queued` change:
    /// a pause or removal from another process in the meantime is never overwritten (the tick then applies it).
    private func recordRunning() {
        let unrecorded = jobs.filter { !$0.value.runningRecorded }.keys
        guard !unrecorded.isEmpty else { return }
        for id in unrecorded { jobs[id]?.runningRecorded = true }
        let started = unrecorded.compactMap { id in records[id].flatMap { $0.state == .running ? $0 : nil } }
        do {
            try store.recordRunning(started)
        } catch {
            configuration.logger.error("cannot record running downloads", metadata: ["error": "\(error)"])
        }
    }

    private func applyExternal(_ stored: DownloadRecord) async {
        let id = stored.downloadID
        guard !isShutDown else { return }
        if jobs[id] != nil {
            // Ours to run; another process may only ask for a pause.
            if stored.state == .paused { await stop(id, reason: .pause) }
            return
        }
        adopt(stored)
    }

    /// Takes the database's view of a download this manager is not running.
    private func adopt(_ stored: DownloadRecord) {
        let id = stored.downloadID
        guard let current = records[id] else {
            remember(stored, queueing: wouldRun(id))
            hub.yield(id, .added(snapshot(of: stored)))
            return
        }
        records[id] = stored
        if let path = stored.destinationPath, path != current.destinationPath { reservedPaths[path] = id }
        switch stored.state {
        case .queued where wouldRun(id) && !heldElsewhere.contains(id):
            if !queue.contains(id) { queue.insert(id, priority: stored.options.priority) }
        case .running where wouldRun(id):
            queue.remove(id)
            heldElsewhere.insert(id)
        default:
            queue.remove(id)
        }
        guard stored.state != current.state else { return }
        hub.yield(id, .status(status(of: stored)))
    }

    /// The status event that reports `record`'s state.
    private func status(of record: DownloadRecord) -> DownloadStatus {
        switch record.state {
        case .queued: .queued
        case .running: .running
        case .paused: .paused
        case .completed: .completed(file: URL(fileURLWithPath: record.destinationPath ?? "", isDirectory: false))
        case .failed: .failed(record.lastError ?? .internalError("failed without an error"))
        }
    }

    private func snapshot(of record: DownloadRecord) -> DownloadSnapshot {
        let id = record.downloadID
        let progress =
            jobs[id]?.state.progress
            ?? DownloadProgress(
                receivedBytes: record.state == .completed ? (record.transfer.totalBytes ?? 0) : record.checkpointedBytes,
                expectedBytes: record.transfer.totalBytes)
        return DownloadSnapshot(
            id: id, url: URL(string: record.url) ?? URL(string: "damaged:\(id)")!, finalURL: record.transfer.finalURL.flatMap(URL.init(string:)),
            state: record.state, progress: progress,
            file: record.destinationPath.map { URL(fileURLWithPath: $0, isDirectory: false) }, lastError: record.lastError,
            options: record.options, createdAt: record.createdAt, startedAt: record.startedAt,
            completedAt: record.completedAt)
    }
}
