import Synchronization

/// Moves complete part files into place in groups, so that many small downloads share one state-database commit
/// and one directory `fsync` instead of paying for each.
///
/// Every file that finishes while a group is being processed joins the next group. For each group, on a blocking
/// thread: the files' data is synced (one `syncfs` per file system for two or more files); the group's records (marked finalizing) are committed in one transaction; the
/// files are renamed into place; each directory involved is synced once; the group is recorded completed in one more
/// transaction. Only then do the callers continue. A crash at any point leaves each download unfinished (it
/// resumes) or finalizing (its rename or its completion is recorded at the next start).
final class FinishingQueue: Sendable {
    /// One complete part file waiting to be moved into place.
    struct Request: Sendable {
        let file: PartFile
        /// The download's record with `finalizing` set, and its state `completed` with `completedAt`: written
        /// (transfer columns first, life-cycle columns once the file is in place) by the queue.
        let record: DownloadRecord
        let partPath: String
        let destination: String
    }

    private struct Waiting {
        var request: Request
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let store: DownloadStore
    private let waiting = Mutex(GroupQueue<Waiting>())

    init(store: DownloadStore) {
        self.store = store
    }

    /// Groups processed so far (each one commit and one sync per directory).
    var groupCount: Int { waiting.withLock { $0.groupCount } }

    /// Returns once the file is durable at its destination and its record says so, or throws why not.
    func finish(_ request: Request) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let startsDraining = waiting.withLock { $0.add(Waiting(request: request, continuation: continuation)) }
            if startsDraining { Task { await self.drain() } }
        }
    }

    /// Processes groups until none is waiting.
    private func drain() async {
        while true {
            let group = waiting.withLock { $0.nextGroup() }
            if group.isEmpty { return }
            let store = store
            let requests = group.map(\.request)
            let results: [(any Error)?]
            do {
                results = try await onBlockingThread { Self.process(requests, store: store) }
            } catch {
                results = Array(repeating: error, count: group.count)
            }
            for (waiting, failure) in zip(group, results) {
                if let failure {
                    waiting.continuation.resume(throwing: failure)
                } else {
                    waiting.continuation.resume()
                }
            }
        }
    }

    /// Syncs, commits, renames and syncs directories for one group; returns each request's error, if any.
    private static func process(_ requests: [Request], store: DownloadStore) -> [(any Error)?] {
        var results: [(any Error)?] = Array(repeating: nil, count: requests.count)
        var synced: [Int] = []
        // Two or more files on one file system: a single flush of it makes all of them durable, instead of one each.
        let byDevice = Dictionary(grouping: requests.indices) { requests[$0].file.device }
        for indices in byDevice.values {
            if indices.count > 1, (try? requests[indices[0]].file.syncFileSystem()) == true {
                synced += indices
                continue
            }
            for index in indices {
                do {
                    try requests[index].file.sync()
                    synced.append(index)
                } catch {
                    results[index] = error
                }
            }
        }
        synced.sort()
        do {
            try store.saveTransfers(synced.map { requests[$0].record })
        } catch {
            for index in synced { results[index] = error }
            return results
        }
        var directories: Set<String> = []
        for index in synced {
            do {
                try FileSystem.rename(requests[index].partPath, to: requests[index].destination)
                directories.insert(FileSystem.parent(of: requests[index].destination))
            } catch {
                results[index] = error
            }
        }
        for directory in directories { FileSystem.syncDirectory(directory) }
        // Durable in place: record them completed, together.
        let placed = synced.filter { results[$0] == nil }
        do {
            try store.saveLifecycle(placed.map { requests[$0].record })
        } catch {
            // The files are in place and the records say finalizing: the next start records them completed.
            for index in placed { results[index] = error }
        }
        return results
    }
}
