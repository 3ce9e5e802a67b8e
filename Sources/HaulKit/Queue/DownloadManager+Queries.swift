import Foundation

extension DownloadManager {
    /// The state of one download, or nil if there is none with that id.
    public func snapshot(_ id: DownloadID) async -> DownloadSnapshot? {
        if let record = records[id] { return snapshot(of: record) }
        return await lookUp([id])[id].map(snapshot(of:))
    }

    /// All downloads, oldest first, optionally only those in `states`.
    public func snapshots(in states: Set<DownloadState>? = nil) async -> [DownloadSnapshot] {
        // Filter first: a few running downloads among 100,000 are found without sorting them all.
        guard let states else {
            return historyOnDisk
                ? await snapshots(of: ids(in: Set(DownloadState.allCases))) : records.inIDOrder.map(snapshot(of:))
        }
        return await snapshots(of: ids(in: states))
    }

    /// The identifiers of the downloads in `states`, oldest first; cheaper than ``snapshots(in:)`` for a large queue.
    public func ids(in states: Set<DownloadState>) async -> [DownloadID] {
        // The lifecycle's small entries, not the records, are scanned: it keeps every download's state.
        var ids: [DownloadID] = []
        for (id, entry) in lifecycle.entries where states.contains(entry.phase.state) { ids.append(id) }
        if states.contains(.completed) { ids += await historyIDs() }
        return ids.sorted()
    }

    /// The identifiers of the downloads in `states` in `order`; cheaper than sorting ``snapshots(in:)``.
    public func ids(in states: Set<DownloadState>, order: DownloadOrder) async -> [DownloadID] {
        // Small keys, not whole records, are collected and sorted: this runs every second for dashboards.
        switch order {
        case .added:
            return await ids(in: states)
        case .queue:
            var keys: [(priority: Int, id: DownloadID)] = []
            for (id, entry) in lifecycle.entries where states.contains(entry.phase.state) {
                keys.append((entry.priority, id))
            }
            if states.contains(.completed) {
                for record in await lookUp(historyIDs()).values {
                    keys.append((record.options.priority, record.downloadID))
                }
            }
            keys.sort { $0.priority != $1.priority ? $0.priority > $1.priority : $0.id < $1.id }
            return keys.map(\.id)
        case .finished:
            var keys: [(date: Date, id: DownloadID)] = []
            for (id, entry) in lifecycle.entries where states.contains(entry.phase.state) {
                guard let record = records[id] else { continue }
                keys.append((record.completedAt ?? record.updatedAt, id))
            }
            if states.contains(.completed) {
                for record in await lookUp(historyIDs()).values {
                    keys.append((record.completedAt ?? record.updatedAt, record.downloadID))
                }
            }
            keys.sort { $0.date != $1.date ? $0.date < $1.date : $0.id < $1.id }
            return keys.map(\.id)
        }
    }

    /// The snapshots of `ids`, in that order (unknown ids are left out).
    public func snapshots(of ids: [DownloadID]) async -> [DownloadSnapshot] {
        let found = await lookUp(ids)
        return ids.compactMap { found[$0].map(snapshot(of:)) }
    }

    /// Which worker of a shared queue (a shared ``Configuration/store``) runs each download now, by its worker name;
    /// empty for the embedded database, whose processes have no names.
    public func workers() async throws(DownloadError) -> [DownloadID: String] { try await store.claimHolders() }

    /// The state of one download, or nil if there is none with that id.
    public func state(of id: DownloadID) async -> DownloadState? {
        if let state = records[id]?.state { return state }
        return await lookUp([id])[id]?.state
    }

    /// The states of `ids`, in that order (nil for an unknown id); one call for a batch just added.
    public func states(of ids: [DownloadID]) async -> [DownloadState?] {
        let found = await lookUp(ids)
        return ids.map { found[$0]?.state }
    }

    /// How many downloads are in `states`; cheaper than ``snapshots(in:)`` for a large queue.
    public func count(in states: Set<DownloadState>) async -> Int {
        let here = states.reduce(0) { $0 + lifecycle.entries.count(in: $1) }
        return here + (states.contains(.completed) ? await historyIDs().count : 0)
    }

    /// Every event of every download, from now on.
    public func events() -> AsyncStream<DownloadEvent> { hub.subscribe() }

    /// The events of one download, from now on; the stream ends when it completes, fails or is removed.
    public func events(for id: DownloadID) -> AsyncStream<DownloadEvent> { hub.subscribe(to: id) }

    /// Calls `handler` with every event of every download from now on, until the observation is cancelled or the
    /// manager shuts down: the cheap way to see every event of many downloads.
    ///
    /// An ``events()`` stream wakes its consumer task for each event, a cost of its own for thousands of small
    /// downloads. The handler instead runs at once, on the task that produced the event (the manager's, or a
    /// download's), possibly on several at the same time: it must be quick, must not block, and must take care of
    /// its own state's safety.
    public func observeEvents(_ handler: @escaping @Sendable (DownloadEvent) -> Void) -> EventObservation {
        EventObservation(hub: hub, token: hub.subscribe(handler: handler))
    }

    /// Waits until a download completes and returns its file, or throws why it failed or was removed.
    public func wait(for id: DownloadID) async throws(DownloadError) -> URL {
        await adoptIfAddedElsewhere(id)
        guard let record = records[id] else { throw .unknownDownload(id) }
        switch record.state {
        case .completed: return URL(fileURLWithPath: record.destinationPath ?? "", isDirectory: false)
        case .failed: throw record.lastError ?? .internalError("failed without an error")
        case .interrupted: throw .interrupted(id)
        case .queued, .running, .paused: break
        }
        // Subscribed in the same actor turn as the look above, and only when needed (`haul get` waits for each of
        // thousands of downloads, most already done): status events are sent from this actor, so none is missed.
        let stream = hub.subscribe(to: id)
        for await event in stream {
            switch event.change {
            case .status(.completed(let file)): return file
            case .status(.failed(let error)): throw error
            case .status(.removed): throw .unknownDownload(id)
            case .status(.interrupted): throw .interrupted(id)
            default: continue
            }
        }
        throw .internalError("the manager shut down before download \(id) ended")
    }

    /// Waits until each of `ids` has ended (completed, failed or been removed; an unknown one has), the manager shuts
    /// down, or the task is cancelled. For many downloads, cheaper than ``wait(for:)`` for each: one subscription
    /// follows them all, and no file URL is made for each. Ask ``snapshots(of:)`` or ``states(of:)`` how they ended.
    public func waitUntilEnded(_ ids: [DownloadID]) async {
        var pending = Set<DownloadID>()
        for id in ids {
            await adoptIfAddedElsewhere(id)
            guard let state = records[id]?.state, state != .completed, state != .failed, state != .interrupted else {
                continue
            }
            pending.insert(id)
        }
        guard !pending.isEmpty else { return }
        // Subscribed in the same actor turn as the look above: status events are sent from this actor, so none is
        // missed.
        let waiter = DownloadEndWaiter(pending: pending)
        let token = hub.subscribe(handler: waiter.receive, ended: waiter.end)
        await waiter.untilEnded()
        hub.unsubscribe(token)
    }

    /// Takes in `id` from the database if another process added it since the last look (the waits ask for it).
    private func adoptIfAddedElsewhere(_ id: DownloadID) async {
        guard records[id] == nil, let stored = try? await store.fetch(id) else { return }
        // Read again after the await: the watcher may have taken it in meanwhile.
        guard records[id] == nil else { return }
        if stored.state == .completed, historyOnDisk { return rememberHistory([stored]) }
        await perform(adopt(stored))
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
    ) async throws(DownloadError) -> DownloadID {
        let id = try await add(url, to: destination, options: options)
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

    // MARK: - Reporting

    /// The status event that reports `record`'s state.
    static func status(of record: DownloadRecord) -> DownloadStatus {
        switch record.state {
        case .queued: .queued
        case .running: .running
        case .paused: .paused
        case .completed: .completed(file: URL(fileURLWithPath: record.destinationPath ?? "", isDirectory: false))
        case .failed: .failed(record.lastError ?? .internalError("failed without an error"))
        case .interrupted: .interrupted
        }
    }

    func snapshot(of record: DownloadRecord) -> DownloadSnapshot { snapshot(of: record, url: nil) }

    /// How a record's owner (``DownloadRecord/owner``) is shown. The last one is kept: a command's downloads share
    /// it, and reading it for each snapshot was 1.6% of the CPU of `haul get` over many small files.
    func shownOwner(_ text: String) -> String {
        if let last = lastShownOwner, last.text == text { return last.shown }
        let shown = ForegroundOwner(text: text)?.description ?? text
        lastShownOwner = (text, shown)
        return shown
    }

    /// `url`: the record's URL already parsed, if the caller has it.
    func snapshot(of record: DownloadRecord, url: URL?) -> DownloadSnapshot {
        let id = record.downloadID
        let progress =
            jobs[id]?.state.progress
            ?? DownloadProgress(
                receivedBytes: record.state == .completed
                    ? (record.transfer.totalBytes ?? 0) : record.checkpointedBytes,
                expectedBytes: record.transfer.totalBytes)
        var snapshot = DownloadSnapshot(
            id: id, url: url ?? URL(string: record.url) ?? URL(string: "damaged:\(id)")!,
            finalURL: record.transfer.finalURL.flatMap(URL.init(string:)), state: record.state, progress: progress,
            file: record.destinationPath.map { URL(fileURLWithPath: $0, isDirectory: false) },
            lastError: record.lastError, options: record.options, createdAt: record.createdAt,
            startedAt: record.startedAt, completedAt: record.completedAt)
        snapshot.updatedAt = record.updatedAt
        if let owner = record.owner { snapshot.owner = shownOwner(owner) }
        if let fingerprint = record.fingerprint {
            snapshot.sha256 = fingerprint.sha256
            snapshot.verification = fingerprint.verification
            if record.state == .completed, let path = record.destinationPath {
                let comparison = fingerprint.compare(withFileAt: path)
                if comparison != .unchanged { snapshot.fileChange = fingerprint.describe(comparison) }
            }
        }
        return snapshot
    }
}
