import Foundation

extension DownloadManager {
    /// Stops a download, keeping what it has; ``resume(_:)-(DownloadID)`` continues from there.
    public func pause(_ id: DownloadID) async throws(DownloadError) {
        try await pause([id])
    }

    /// Pauses several downloads; those not running in this manager are recorded in one transaction.
    ///
    /// Throws ``DownloadError/Code/unknownDownload`` before changing anything if an id is unknown.
    public func pause(_ ids: [DownloadID]) async throws(DownloadError) {
        for id in ids { _ = try await existing(id) }
        // One running in another process sees the change in the database and stops.
        await performAndWait(lifecycle.pause(ids))
    }

    /// Queues a paused or failed download again (or releases a held stored one); it continues from the bytes on
    /// disk.
    public func resume(_ id: DownloadID) async throws(DownloadError) {
        try await resume([id])
    }

    /// Queues several paused, failed or interrupted downloads again, recording them in one transaction. They become
    /// this manager's own when it owns its downloads (``Configuration/ownsItsDownloads``), else the queue's (an
    /// interrupted `haul get` download handed to `haul run`).
    ///
    /// Throws ``DownloadError/Code/unknownDownload`` before changing anything if an id is unknown.
    public func resume(_ ids: [DownloadID]) async throws(DownloadError) {
        // A download whose job has just ended (failed, say) is resumed once that end is recorded: decided before,
        // the resume would be undone by it, and the claim it took released.
        for id in ids where endingJobs.contains(id) { await jobSettled(id) }
        for id in ids where try await existing(id).isDamaged {
            // Its row cannot be read: there is nothing to resume from.
            throw records[id]?.lastError ?? .damagedRecord(id, reason: "unreadable")
        }
        // Asked before anything changes: the lifecycle then decides in one step, with no await in between.
        let elsewhere = await store.claimedElsewhere(ids)
        await takeOwnership(of: ids)
        // A completed one is run again only if its file changed since (and not at all if it must be kept).
        var refused: [DownloadID] = []
        for id in ids where await checkCompletedFile(id) == .refused { refused.append(id) }
        await perform(
            lifecycle.resume(ids.filter { !refused.contains($0) }, claimedElsewhere: { elsewhere.contains($0) }))
        await schedule()
    }

    /// Makes `ids` this manager's own (``Configuration/ownsItsDownloads``) or the queue's, recording those that
    /// change.
    func takeOwnership(of ids: [DownloadID]) async {
        var changed: [DownloadRecord] = []
        for id in ids {
            guard var record = records[id], record.owner != ownerText else { continue }
            record.owner = ownerText
            records[id] = record
            changed.append(record)
        }
        guard !changed.isEmpty else { return }
        do {
            try await store.saveLifecycle(changed)
        } catch {
            configuration.logger.error("cannot record owners", metadata: ["error": "\(error)"])
        }
    }

    /// Stops a download and deletes its partial data, forgetting it. A completed file is left in place.
    public func cancel(_ id: DownloadID) async throws(DownloadError) {
        try await remove(id, deletingFile: false)
    }

    /// Forgets a download, deleting its partial data; with `deletingFile`, also deletes the completed file, unless it
    /// changed since Haul put it there: then it throws ``DownloadError/Code/fileChanged`` and keeps both.
    public func remove(_ id: DownloadID, deletingFile: Bool = false) async throws(DownloadError) {
        try await remove([id], deletingFiles: deletingFile)
    }

    /// Forgets several downloads (see ``remove(_:deletingFile:)``); those not running are recorded in one
    /// transaction.
    ///
    /// Throws ``DownloadError/Code/unknownDownload`` before changing anything if an id is unknown; if a file cannot be
    /// deleted, the others are still removed and the first such error is thrown.
    public func remove(_ ids: [DownloadID], deletingFiles: Bool = false) async throws(DownloadError) {
        for id in ids { _ = try await existing(id) }
        if let failure = await performAndWait(lifecycle.remove(ids, deletingFiles: deletingFiles)) { throw failure }
    }

    /// Pauses every queued and running download.
    public func pauseAll() async {
        try? await pause(ids(in: [.queued, .running]))
    }

    /// Resumes every paused, failed and interrupted download.
    public func resumeAll() async {
        try? await resume(
            ids(in: [.paused, .failed, .interrupted, .queued]).filter { records[$0]?.isDamaged == false })
    }

    /// Forgets every download, deleting partial data; with `deletingFiles`, completed files too.
    public func removeAll(deletingFiles: Bool = false) async {
        try? await remove(ids(in: Set(DownloadState.allCases)), deletingFiles: deletingFiles)
    }

    /// Changes a download's speed limit (bytes per second, nil for none), also while it runs.
    public func setSpeedLimit(_ bytesPerSecond: Int64?, for id: DownloadID) async throws(DownloadError) {
        var record = try await existing(id)
        if let bytesPerSecond, bytesPerSecond <= 0 { throw .invalidRequest("a speed limit must be positive") }
        record.options.speedLimit = bytesPerSecond
        record.updatedAt = Date()
        records[id] = record
        jobs[id]?.limiter.setLimit(bytesPerSecond)
        try await store.saveSettings(record)
    }

    /// Replaces a download's mirrors (``DownloadOptions/mirrors``); a running download uses the new list from its
    /// next run (after a pause, a restart or a new process).
    public func setMirrors(_ mirrors: [URL], for id: DownloadID) async throws(DownloadError) {
        var record = try await existing(id)
        for mirror in mirrors { try Self.validate(mirror) }
        record.options.mirrors = mirrors
        record.updatedAt = Date()
        records[id] = record
        try await store.saveSettings(record)
    }

    /// Changes a download's priority (higher starts first; equal priorities start in the order added).
    public func setPriority(_ priority: Int, for id: DownloadID) async throws(DownloadError) {
        var record = try await existing(id)
        guard record.options.priority != priority else { return }
        record.options.priority = priority
        record.updatedAt = Date()
        records[id] = record
        lifecycle.setPriority(priority, of: id)
        try await store.saveSettings(record)
    }

    /// Changes how many downloads run at once (at least 1). A higher number starts queued downloads at once; a lower
    /// one lets running downloads finish.
    public func setMaxConcurrentDownloads(_ count: Int) async throws(DownloadError) {
        guard count >= 1 else { throw .invalidRequest("maxConcurrentDownloads must be at least 1, got \(count)") }
        lifecycle.setMaxConcurrentDownloads(count)
        await schedule()
    }

    /// How many downloads run at once now.
    public var maxConcurrentDownloads: Int { lifecycle.rules.maxConcurrentDownloads }

    /// Changes the cap on all downloads together (bytes per second, nil for none), also while they run.
    public func setGlobalSpeedLimit(_ bytesPerSecond: Int64?) throws(DownloadError) {
        if let bytesPerSecond, bytesPerSecond <= 0 { throw .invalidRequest("a speed limit must be positive") }
        globalLimiter.setLimit(bytesPerSecond)
    }

    /// The current cap on all downloads together.
    public var globalSpeedLimit: Int64? { globalLimiter.limit }

    /// Changes the cap on all downloads from `host` together (bytes per second, nil for none), also while they run.
    public func setSpeedLimit(_ bytesPerSecond: Int64?, forHost host: String) throws(DownloadError) {
        if let bytesPerSecond, bytesPerSecond <= 0 { throw .invalidRequest("a speed limit must be positive") }
        hostLimiter(host).setLimit(bytesPerSecond)
    }

    /// The current cap on all downloads from `host` together.
    public func speedLimit(forHost host: String) -> Int64? { hostLimiters[host.lowercased()]?.limit }

    /// The limiter shared by the downloads from `host`, made on first use.
    func hostLimiter(_ host: String) -> RateLimiter {
        let key = host.lowercased()
        if let existing = hostLimiters[key] { return existing }
        let limiter = RateLimiter(bytesPerSecond: nil, clock: configuration.tickClock)
        hostLimiters[key] = limiter
        return limiter
    }

    /// Checkpoints and stops running downloads without pausing them (a manager opened later continues them; a
    /// manager that owns its downloads records those it leaves unfinished ``DownloadState/interrupted``). The
    /// manager accepts no new work afterwards.
    public func shutdown() async {
        guard !lifecycle.isShutDown else { return }
        watcherTask?.cancel()
        followingOthers?.cancel()
        await performAndWait(lifecycle.shutdown())
        await releaseClaimsAhead()
        await session.pacer.countAllUncounted()
        // A state already seen (a download failed: `haul get`'s wait returned on it) is reported before the events
        // end: `haul get` exited 0 with the download shown running, its failure never delivered.
        while reportsInFlight > 0 { await withCheckedContinuation { reportWaiters.append($0) } }
        hub.finishAll()
    }
}
