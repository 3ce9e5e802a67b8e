import Foundation

extension DownloadManager {
    /// Queues a download and returns its identifier at once.
    ///
    /// Adding the same download again returns the existing one instead of starting over: the same URL (or the same
    /// but for its signature: the new URL replaces the old) with the same destination, or with a
    /// file or directory that is where the existing one writes. It is resumed if it was paused, failed or
    /// interrupted, takes the new options where they are not the defaults, and,
    /// if it had completed, its file is compared with what Haul put there: a file changed or gone since is fetched
    /// again (``DownloadEvent/Change/fileChanged(how:action:)``). A user name and password in the URL become the
    /// download's ``DownloadOptions/credentials`` (unless it has some) and leave the URL.
    ///
    /// - Parameters:
    ///   - url: an `http` or `https` URL.
    ///   - destination: a file, or a directory to name the file in; nil for the download directory.
    ///   - options: checksum, headers, connections, priority and the rest (``DownloadOptions``).
    ///   - paused: add it paused (it waits for ``resume(_:)-(DownloadID)``); nothing is fetched in between.
    @discardableResult
    public func add(
        _ url: URL, to destination: DownloadDestination? = nil, options: DownloadOptions = .init(),
        paused: Bool = false
    )
        async throws(DownloadError) -> DownloadID
    {
        try await add(contentsOf: [(url, destination, options)], paused: paused)[0]
    }

    /// Queues several downloads in one database transaction; returns their identifiers in order.
    @discardableResult
    public func add(
        contentsOf downloads: [(url: URL, destination: DownloadDestination?, options: DownloadOptions)],
        paused: Bool = false
    )
        async throws(DownloadError) -> [DownloadID]
    {
        try ensureRunning()
        // One batch at a time: a batch looks for existing downloads and inserts the new ones with awaits in between,
        // and two batches of one URL must not both find none (the second finds the first's).
        await addingTurn()
        defer { addingTurnEnded() }
        var results: [DownloadID?] = []
        var fresh: [DownloadRecord] = []
        var freshPositions: [Int] = []
        // The fresh records' URLs as given (without credentials): their snapshots need not parse the text again.
        var freshURLs: [URL] = []
        var files: Set<String> = []
        var existing: [DownloadID] = []
        var existingSeen: Set<DownloadID> = []
        /// Existing downloads given another checksum now: a completed file is checked against it.
        var newChecksums: Set<DownloadID> = []
        var shared: OutOfLine<DownloadOptions>?
        var lastResolved: (given: DownloadDestination?, resolved: DownloadDestination?)?
        /// The fresh records of this batch by ``RequestIndex/key(url:destination:)`` (positions in `fresh`): the same
        /// download asked for twice in one batch is one download, as when it is asked for again later.
        var freshByRequest: [String: Int] = [:]
        var freshKeys: [String] = []
        /// Positions in the results that repeat a fresh record of this batch (its position in `fresh`).
        var repeats: [(result: Int, fresh: Int)] = []
        let requests = try downloads.map { (given, destination, givenOptions) throws(DownloadError) in
            let (url, options) = Self.separatingCredentials(given, givenOptions)
            try Self.validate(url)
            for mirror in options.mirrors { try Self.validate(mirror) }
            guard (1...32).contains(options.connections) else {
                throw .invalidRequest("connections must be 1 to 32, got \(options.connections)")
            }
            return (url: url, text: url.absoluteString, destination: destination, options: options)
        }
        // The completed downloads that these may be asked for again, from a history on disk: one read for all.
        await loadHistory(matching: requests.map { ResourceKey.of($0.text) })
        for (url, text, destination, options) in requests {
            // A batch usually has one destination: resolved once.
            let resolved: DownloadDestination?
            if let lastResolved, lastResolved.given == destination {
                resolved = lastResolved.resolved
            } else {
                resolved = resolve(destination)
                if case .file = resolved {} else { lastResolved = (destination, resolved) }
            }
            let key = requestKey(url: text, destination: resolved)
            if let earlier = freshByRequest[key] {
                // Asked for twice in this batch: the later request's URL and options, as for a download asked for again.
                if fresh[earlier].url != text {
                    fresh[earlier].url = text
                    freshURLs[earlier] = url.baseURL == nil ? url : url.absoluteURL
                }
                let merged = fresh[earlier].options.merging(options)
                if merged != fresh[earlier].options { fresh[earlier].options = merged }
                repeats.append((results.count, earlier))
                results.append(nil)
                continue
            }
            if case .file(let file) = resolved {
                // Two downloads never write one file: not two in this batch, nor one beside an unfinished other.
                guard files.insert(file.path).inserted else {
                    throw .invalidRequest("two downloads would write \(file.path): give each its own file")
                }
                if let holder = reservations.holder(of: file.path), let other = records[holder],
                    !ResourceKey.same(other.url, text),
                    other.state != .completed
                {
                    throw .invalidRequest(
                        "download \(holder) already writes \(file.path): give this one another file, or remove it")
                }
            }
            if let id = existingDownload(url: text, destination: resolved, key: key) {
                // Resumed if paused, failed or interrupted, and run by this manager from now on.
                if records[id]?.isDamaged == false {
                    if await takeRequest(url: text, options: options, for: id) { newChecksums.insert(id) }
                    // Once, if the batch asks for it twice.
                    if existingSeen.insert(id).inserted { existing.append(id) }
                }
                results.append(id)
                continue
            }
            let now = Date()
            // A batch usually shares its options: one copy for all of it.
            if shared?.value != options.asKept { shared = OutOfLine(options.asKept) }
            var record = DownloadRecord(
                url: text, requestedDestination: resolved, sharing: shared ?? OutOfLine(options.asKept),
                state: paused ? .paused : .queued,
                createdAt: now, updatedAt: now)
            record.owner = ownerText
            if case .file(let file) = resolved { record.destinationPath = file.path }
            freshByRequest[key] = fresh.count
            freshKeys.append(key)
            freshPositions.append(results.count)
            freshURLs.append(url.baseURL == nil ? url : url.absoluteURL)
            results.append(nil)
            fresh.append(record)
        }
        if !existing.isEmpty, !paused {
            let elsewhere = await store.claimedElsewhere(existing)
            await takeOwnership(of: existing)
            var refused: [DownloadID] = []
            for id in existing where await checkCompletedFile(id, newChecksum: newChecksums.contains(id)) == .refused {
                refused.append(id)
            }
            await perform(
                lifecycle.resume(
                    existing.filter { !refused.contains($0) }, claimedElsewhere: { elsewhere.contains($0) }))
        }
        if fresh.count > 1 {
            records.reserveCapacity(records.count + fresh.count)
            lifecycle.reserveCapacity(records.count + fresh.count)
        }
        for (index, record) in try await store.insert(consume fresh).enumerated() {
            remember(record, requestKey: freshKeys[index])
            lifecycle.add(record.downloadID, priority: record.options.priority, paused: paused)
            results[freshPositions[index]] = record.downloadID
            hub.yield(record.downloadID, .added(snapshot(of: record, url: freshURLs[index])))
            hub.yield(record.downloadID, .status(paused ? .paused : .queued))
        }
        for (result, earlier) in repeats { results[result] = results[freshPositions[earlier]] }
        await schedule()
        return results.map { $0! }
    }

    /// Credentials written in `url` moved into `options` (unless it has some): kept as the download's credentials,
    /// never in its URL, which is shown everywhere.
    static func separatingCredentials(_ url: URL, _ options: DownloadOptions) -> (URL, DownloadOptions) {
        guard let embedded = Credentials.embedded(in: url) else { return (url, options) }
        var options = options
        if options.credentials == nil { options.credentials = embedded.credentials }
        return (embedded.url, options)
    }

    static func validate(_ url: URL) throws(DownloadError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .invalidURL(url.absoluteString, reason: "only http and https are supported")
        }
        guard let host = url.host, !host.isEmpty else {
            throw .invalidURL(url.absoluteString, reason: "it has no host")
        }
    }

    /// The destination to record: absolute. None stays none in a shared queue: each worker then saves into its
    /// own download directory.
    private func resolve(_ destination: DownloadDestination?) -> DownloadDestination? {
        let base = configuration.downloadDirectory
        switch destination {
        case nil:
            return !configuration.store.isShared ? .directory(absolute(base, base: base, isDirectory: true)) : nil
        case .directory(let url):
            return .directory(absolute(url, base: base, isDirectory: true))
        case .file(let url):
            let file = absolute(url, base: base, isDirectory: false)
            if FileSystem.entry(at: file.path) == .directory {
                return .directory(absolute(file, base: base, isDirectory: true))
            }
            return .file(file)
        }
    }

    /// `url` made absolute and spelled one way, whether or not the directory exists yet (`URL(fileURLWithPath:)`
    /// adds a trailing `/` only for a directory that is there).
    private func absolute(_ url: URL, base: URL, isDirectory: Bool) -> URL {
        let path = url.path
        let absolute = path.hasPrefix("/") ? URL(fileURLWithPath: path) : base.appendingPathComponent(path)
        return URL(fileURLWithPath: absolute.standardizedFileURL.path, isDirectory: isDirectory)
    }

    /// How a request is keyed in ``requestIndex`` (``RequestIndex/key(url:destination:)``), the index built on first
    /// use.
    private func requestKey(url: String, destination: DownloadDestination?) -> String {
        if requestIndex == nil { requestIndex = RequestIndex(records) }
        // Changed in place (its last spelling is kept): never nil after the line above.
        return requestIndex!.key(url: url, destination: destination)
    }

    /// The download that `url` to `destination` asks for again: one of the same URL (but for its signature) with
    /// the same requested destination (`key`, ``RequestIndex/key(url:destination:)``), else one of that URL that
    /// writes the file given (the last to take its name), or writes in the directory given.
    ///
    /// None of these compares every download of the URL with the file given: a URL saved under 10,000 names, given
    /// 10,000 more, made each addition read every record of the URL (over four minutes for the batch).
    private func existingDownload(url: String, destination: DownloadDestination?, key: String) -> DownloadID? {
        guard let index = requestIndex else { return nil }
        if let same = index.downloads(askedFor: key).first(where: { records[$0] != nil }) { return same }
        switch destination {
        case .file(let file)?:
            guard let holder = reservations.holder(of: file.path), records.destinationPath(of: holder) == file.path,
                let holderURL = records.url(of: holder), ResourceKey.same(holderURL, url)
            else { return nil }
            return holder
        case .directory(let directory)?:
            return index.downloads(ofURL: url).first { id in
                records.destinationPath(of: id).map { FileSystem.parent(of: $0) == directory.path } ?? false
            }
        case nil:
            return nil
        }
    }

    /// A download asked for again: a freshly signed `url` replaces its URL, and `options` its options where they
    /// speak (are not the defaults). Returns whether its checksum changed.
    @discardableResult
    func takeRequest(url: String, options: DownloadOptions, for id: DownloadID) async -> Bool {
        guard var record = records[id] else { return false }
        let merged = record.options.merging(options)
        guard record.url != url || merged != record.options else { return false }
        let checksumChanged = merged.checksum != record.options.checksum
        if record.url != url {
            requestIndex?.remove(record)
            hostKeys[id] = nil
            record.url = url
            requestIndex?.insert(record)
        }
        record.options = merged
        record.updatedAt = Date()
        records[id] = record
        do {
            try await store.saveSettings(record)
        } catch {
            configuration.logger.error("cannot record new options", metadata: ["download": "\(id)"])
        }
        return checksumChanged
    }
}

extension DownloadManager {
    /// Returns when no other ``add(contentsOf:paused:)`` batch is being added (first come, first served).
    func addingTurn() async {
        guard addingBatch else {
            addingBatch = true
            return
        }
        await withCheckedContinuation { addingWaiters.append($0) }
    }

    /// The batch is added: the next waiting batch goes on (holding the turn), or none is being added.
    func addingTurnEnded() {
        if addingWaiters.isEmpty {
            addingBatch = false
        } else {
            addingWaiters.removeFirst().resume()
        }
    }
}
