import Foundation
import NIOCore
import Synchronization

/// Moves complete part files into place in groups, so that many small downloads share one state-database commit
/// and one directory `fsync` instead of paying for each.
///
/// Every file that finishes while a group is being processed joins the next group. For each group, on a blocking
/// thread: the records of the held bodies (with their destinations) are committed; the complete part files are synced
/// (one `syncfs` per file system for two or more files) and their records (marked finalizing) committed; the held
/// bodies are written to new files and synced; every part file is renamed into place, and every held body's file
/// is linked into place (on Linux it has no name until then: `O_TMPFILE`); each directory involved is synced once.
/// The group is then recorded completed in the next group's first transaction (or alone, when no group follows);
/// only then do its callers continue. A crash at any point leaves each download unfinished (it resumes), finalizing
/// (its rename or its completion is recorded at the next start), or, for a held body, with nothing on disk or a
/// recorded part file that is trusted as any other; a held body in place but not recorded completed is fetched
/// again.
///
/// A caller either waits for its file (``finish(_:)``) or hands it off and goes on (``handOff(_:to:)``): a small
/// download's job then ends at once, and the queue tells the download's owner how each of a group's hand-offs ended,
/// in one call.
final class FinishingQueue: Sendable {
    /// One complete file waiting to be moved into place.
    struct Request: Sendable {
        /// What is finished: a part file, or a small body held in memory (``HeldBody``).
        enum Contents: Sendable {
            /// A complete part file, open.
            case file(PartFile)
            /// A complete body, not on disk yet. `fresh`: its name was reserved now, so nothing is at its part path
            /// (it goes to an unnamed file, or its part file is created exclusively); otherwise a leftover at the
            /// part path (never trusted) is emptied and used.
            case held([ByteBuffer], fresh: Bool)
        }

        let contents: Contents
        /// The download's record, its state `completed` with `completedAt`: written (transfer columns first,
        /// life-cycle columns once the file is in place) by the queue. With `finalizing` set for a part file; for a
        /// held body, with `durableBytes` 0 (nothing of it is synced when its transfer columns are committed). Its
        /// fingerprint carries the file's SHA-256; the queue adds the rest (size, time, identity) once the file is
        /// written and synced, and records it with the completion.
        var record: DownloadRecord
        let partPath: String
        let destination: String
        /// Which file found at the destination may be replaced.
        var replacing: Replacing = .any
    }

    /// How the finishing of a download handed off to the queue (``handOff(_:to:)``) ended: its record, with the
    /// fingerprint of its file in place, recorded completed; or the error that stopped it (nothing of it is then
    /// trusted, as when ``finish(_:)`` throws).
    struct HandOffEnd: Sendable {
        /// The request's record; on success, with the fingerprint of the file in place.
        let record: DownloadRecord
        let failure: (any Error)?
    }

    /// A request waiting for its group, with whoever hears how it ended.
    private struct Waiting: Sendable {
        enum Caller: Sendable {
            /// A caller of ``finish(_:)``, suspended until then.
            case awaiting(CheckedContinuation<FileFingerprint?, any Error>)
            /// A download whose job ended at the hand-off: its end goes to the receiver, with its group's.
            case handedOff(any FinishingReceiver)
        }

        var item: Request
        let caller: Caller
    }

    private let store: DownloadStore
    /// The reservations' listings: a held body's part path is found free in them rather than looked up.
    private let listings: DirectoryListings
    private let waiting = Mutex(GroupQueue<Waiting>())
    private let handOffs = Atomic<Int>(0)

    init(store: DownloadStore, listings: DirectoryListings = DirectoryListings()) {
        self.store = store
        self.listings = listings
    }

    /// Groups processed so far (each about one commit, and one sync per directory).
    var groupCount: Int { waiting.withLock { $0.groupCount } }

    /// Requests taken over from their jobs so far (``handOff(_:to:)``).
    var handOffCount: Int { handOffs.load(ordering: .relaxed) }

    /// Returns once the file is durable at its destination and its record says so (with the file's fingerprint,
    /// which it returns), or throws why not.
    @discardableResult
    func finish(_ request: Request) async throws -> FileFingerprint? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<FileFingerprint?, any Error>) in
            add(Waiting(item: request, caller: .awaiting(continuation)))
        }
    }

    /// Takes `request` over from its job, which ends now rather than waiting: once it is in place and recorded
    /// completed (or failed), `receiver` hears it, together with the other hand-offs of its group.
    func handOff(_ request: Request, to receiver: any FinishingReceiver) {
        handOffs.add(1, ordering: .relaxed)
        add(Waiting(item: request, caller: .handedOff(receiver)))
    }

    private func add(_ request: Waiting) {
        let startsDraining = waiting.withLock { $0.add(request) }
        if startsDraining { Task { await self.drain() } }
    }

    /// Processes groups until none is waiting. A group in place is recorded completed in the first transaction of
    /// the next group, or alone when none follows.
    private func drain() async {
        var placed: [Waiting] = []
        while true {
            let group = waiting.withLock { $0.nextGroup(stillHandling: !placed.isEmpty) }
            if group.isEmpty && placed.isEmpty { return }
            let finished = placed
            let results = await Self.process(group.map(\.item), completing: finished, store: store, listings: listings)
            placed = []
            var ends = HandOffEnds()
            for (waiting, result) in zip(group, results) {
                switch result {
                case .failure(let failure): ends.end(waiting, .failure(failure))
                case .success(let fingerprint):
                    var waiting = waiting
                    waiting.item.record.fingerprint = fingerprint
                    placed.append(waiting)
                }
            }
            ends.deliver()
        }
    }

    /// Ends waits: resumes each caller of ``finish(_:)``, and gathers the hand-offs' ends to give each receiver
    /// all of its ends together (``deliver()``).
    private struct HandOffEnds {
        private var byReceiver: [ObjectIdentifier: (receiver: any FinishingReceiver, ends: [HandOffEnd])] = [:]

        mutating func end(_ waiting: Waiting, _ result: Result<FileFingerprint?, any Error>) {
            switch waiting.caller {
            case .awaiting(let continuation):
                continuation.resume(with: result)
            case .handedOff(let receiver):
                var record = waiting.item.record
                var failure: (any Error)?
                switch result {
                case .success(let fingerprint): record.fingerprint = fingerprint
                case .failure(let error): failure = error
                }
                byReceiver[ObjectIdentifier(receiver), default: (receiver, [])].ends.append(
                    HandOffEnd(record: record, failure: failure))
            }
        }

        /// Gives each receiver its ends gathered so far.
        mutating func deliver() {
            for (receiver, ends) in byReceiver.values { receiver.finishingEnded(ends) }
            byReceiver = [:]
        }
    }

    /// Records `finished` (the previous group, in place) completed and ends their waits; records this group's files,
    /// writes its held bodies, syncs and renames it, and syncs its directories. Returns each request's error, or the
    /// fingerprint of its file in place (its completion still to record).
    private static func process(
        _ requests: [Request], completing finished: [Waiting], store: DownloadStore, listings: DirectoryListings
    ) async -> [Result<FileFingerprint?, any Error>] {
        var results: [(any Error)?] = Array(repeating: nil, count: requests.count)
        var files: [Int: PartFile] = [:]
        var held: [Int] = []
        for (index, request) in requests.enumerated() {
            switch request.contents {
            case .file(let file): files[index] = file
            case .held: held.append(index)
            }
        }
        // One transaction: the previous group completed, and each held body's record (its destination), committed
        // before its part file exists, as for any part file. The store's commits are awaited (the store runs its
        // I/O where it runs it); the file work goes to NIO's blocking threads.
        do {
            try await store.saveLifecycleAndTransfers(
                lifecycle: finished.map(\.item.record), transfers: held.map { requests[$0].record })
            var ends = HandOffEnds()
            for waiting in finished { ends.end(waiting, .success(waiting.item.record.fingerprint)) }
            ends.deliver()
        } catch {
            // The previous group is in place, its records finalizing or with part data: see `FinishingQueue`.
            var ends = HandOffEnds()
            for waiting in finished { ends.end(waiting, .failure(error)) }
            ends.deliver()
            for index in held { results[index] = error }
            held = []
        }
        // A part file is synced before its record says finalizing (a second transaction, only for part files).
        var recorded: [Int]
        do {
            (recorded, results) = try await onBlockingPool { [results, files] in
                var results = results
                let recorded = sync(files, results: &results)
                if !recorded.isEmpty { CrashPoint.reach(CrashPoint.beforeFinalizingRecorded) }
                return (recorded, results)
            }
        } catch {
            // The blocking thread pool is gone: nothing more of the group is done.
            return results.map { .failure($0 ?? error) }
        }
        do {
            try await store.saveTransfers(recorded.map { requests[$0].record })
        } catch {
            for index in recorded { results[index] = error }
            recorded = []
        }
        do {
            return try await onBlockingPool { [results, recorded, held, files] in
                place(requests, held: held, recorded: recorded, results: results, files: files, listings: listings)
            }
        } catch {
            return results.map { .failure($0 ?? error) }
        }
    }

    /// The file work of a group once its part files are recorded: writes the held bodies to new files and syncs them,
    /// puts every file in place and syncs each directory once. Runs on a blocking thread.
    private static func place(
        _ requests: [Request], held: [Int], recorded: [Int], results: [(any Error)?], files: [Int: PartFile],
        listings: DirectoryListings
    ) -> [Result<FileFingerprint?, any Error>] {
        var results = results
        var recorded = recorded
        if !held.isEmpty { CrashPoint.reach(CrashPoint.afterHeldBodiesRecorded) }
        var created: [Int: PartFile] = [:]
        // Each directory is made (if missing) once per group, not once per file.
        var directories: [String: DownloadError?] = [:]
        for index in held {
            guard case .held(let body, let fresh) = requests[index].contents else { continue }
            do throws(DownloadError) {
                let directory = FileSystem.parent(of: requests[index].partPath)
                if directories[directory] == nil {
                    do throws(DownloadError) {
                        try FileSystem.createDirectory(directory)
                        directories[directory] = .some(nil)
                    } catch {
                        directories[directory] = error
                    }
                }
                if let error = directories[directory] ?? nil { throw error }
                // A fresh name has nothing at its part path: the body goes to a file with no name, linked into
                // place once synced (no part-file entry to create and rename), where the system has such files.
                let file: PartFile
                if fresh, let unnamed = PartFile.unnamed(in: directory) {
                    file = unnamed
                } else {
                    file = try PartFile(path: requests[index].partPath, mode: fresh ? .createNew : .reuseLeftover)
                }
                created[index] = file
                try file.write(body, at: 0)
            } catch {
                results[index] = error
            }
        }
        defer { for file in created.values { file.close() } }
        recorded += sync(created.filter { results[$0.key] == nil }, results: &results)
        var renamedIn: Set<String> = []
        /// Held bodies that went to their part file after all (``place(_:_:partPathShownFree:)``): the file in place.
        var placedInstead: [Int: FileFingerprint] = [:]
        // What is at the unnamed files' part paths, from their directories' listings (refreshed once).
        let unnamed = recorded.filter { created[$0]?.isUnnamed == true }
        let shownFree = Dictionary(
            uniqueKeysWithValues: zip(unnamed, listings.showFree(unnamed.map { requests[$0].partPath })))
        for index in recorded.sorted() {
            do {
                if let file = created[index], file.isUnnamed {
                    placedInstead[index] = try place(
                        file, requests[index], partPathShownFree: shownFree[index] ?? false)
                } else {
                    try check(requests[index])
                    try FileSystem.rename(requests[index].partPath, to: requests[index].destination)
                }
                renamedIn.insert(FileSystem.parent(of: requests[index].destination))
            } catch {
                results[index] = error
            }
        }
        for directory in renamedIn { FileSystem.syncDirectory(directory) }
        if !recorded.isEmpty { CrashPoint.reach(CrashPoint.beforeCompletionRecorded) }
        return results.indices.map { index in
            if let failure = results[index] { return .failure(failure) }
            // What was put in place, as it is now: the file's size, time and identity, with its digest.
            let file: PartFile? =
                if case .file(let part) = requests[index].contents { part } else { created[index] }
            var fingerprint = placedInstead[index] ?? file?.fingerprint
            fingerprint?.sha256 = requests[index].record.fingerprint?.sha256
            fingerprint?.verification = requests[index].record.fingerprint?.verification
            return .success(fingerprint)
        }
    }

    /// Names a held body's synced unnamed file at its destination. Something at its part path is another
    /// download's (the name was reserved fresh): it fails, as creating the part file would. `partPathShownFree`: its
    /// directory's listing shows nothing there, so it is not looked up. When the link cannot be made (a file is at
    /// the destination, which it may replace: ``Request/Replacing``), the body goes the usual way: written to its part
    /// file, synced and renamed over the destination; then the fingerprint of that file is returned (the unnamed
    /// file's size, time and identity are not those of the file in place, which would read as changed since).
    private static func place(
        _ file: PartFile, _ request: Request, partPathShownFree: Bool
    ) throws(DownloadError) -> FileFingerprint? {
        if !partPathShownFree, FileSystem.entry(at: request.partPath) != .none {
            throw .destinationInUse(path: request.partPath, by: "a file created at the same moment")
        }
        if (try? file.link(as: request.destination)) != nil { return nil }
        // Something is at the destination (the link cannot replace it): the body replaces it only if it may.
        try check(request)
        guard case .held(let body, _) = request.contents else {
            throw .internalError("an unnamed file for download \(request.record.downloadID) that has no held body")
        }
        let named = try PartFile(path: request.partPath, mode: .createNew)
        defer { named.close() }
        try named.write(body, at: 0)
        try named.sync()
        do {
            // Once more, just before the rename: the file was written and synced meanwhile.
            try check(request)
        } catch {
            // Not recorded as a part file (the body is fetched again): not left behind as one either.
            try? FileSystem.removeFile(request.partPath)
            throw error
        }
        try FileSystem.rename(request.partPath, to: request.destination)
        return named.fingerprint
    }

    /// Throws when the request may not replace what is at its destination (``Request/Replacing``).
    private static func check(_ request: Request) throws(DownloadError) {
        // A held body's bytes are not on disk to keep: it is fetched again once the destination is free.
        let partPath: String? = if case .held = request.contents { nil } else { request.partPath }
        let fingerprint = request.record.fingerprint
        try request.replacing.check(
            request.destination, size: fingerprint?.size, sha256: fingerprint?.sha256, partPath: partPath)
    }

    /// Makes `files` durable: one flush per file system for two or more files on it, else `fdatasync` each. Returns
    /// the indices synced, sorted; sets the error of each file that was not.
    private static func sync(_ files: [Int: PartFile], results: inout [(any Error)?]) -> [Int] {
        var synced: [Int] = []
        let byDevice = Dictionary(grouping: files.keys) { files[$0]!.device }
        for indices in byDevice.values {
            if indices.count > 1, (try? files[indices[0]]!.syncFileSystem()) == true {
                synced += indices
                continue
            }
            for index in indices {
                do {
                    try files[index]!.sync()
                    synced.append(index)
                } catch {
                    results[index] = error
                }
            }
        }
        return synced.sorted()
    }
}
