import NIOCore
import Synchronization

/// Moves complete part files into place in groups, so that many small downloads share one state-database commit
/// and one directory `fsync` instead of paying for each.
///
/// Every file that finishes while a group is being processed joins the next group. For each group, on a blocking
/// thread: the complete part files are synced (one `syncfs` per file system for two or more files); their records
/// (marked finalizing) and those of the held bodies (with their destinations) are committed in one transaction; the
/// held bodies are written to new part files and synced; every file is renamed into place; each directory involved
/// is synced once; the group is recorded completed in one more transaction. Only then do the callers continue. A
/// crash at any point leaves each download unfinished (it resumes), finalizing (its rename or its completion is
/// recorded at the next start), or, for a held body, with a recorded part file that is trusted as any other.
final class FinishingQueue: Sendable {
    /// One complete file waiting to be moved into place.
    struct Request: Sendable {
        /// What is finished: a part file, or a small body held in memory (``HeldBody``).
        enum Contents: Sendable {
            /// A complete part file, open.
            case file(PartFile)
            /// A complete body, not on disk yet. `fresh`: its name was reserved now, so its part file is created
            /// exclusively; otherwise a leftover at the part path (never trusted) is emptied.
            case held(ByteBuffer, fresh: Bool)
        }

        let contents: Contents
        /// The download's record, its state `completed` with `completedAt`: written (transfer columns first,
        /// life-cycle columns once the file is in place) by the queue. With `finalizing` set for a part file; for a
        /// held body, with `durableBytes` 0 (nothing of it is synced when its transfer columns are committed).
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

    /// Syncs, commits, writes the held bodies, renames and syncs directories for one group; returns each request's
    /// error, if any.
    private static func process(_ requests: [Request], store: DownloadStore) -> [(any Error)?] {
        var results: [(any Error)?] = Array(repeating: nil, count: requests.count)
        var files: [Int: PartFile] = [:]
        var held: [Int] = []
        for (index, request) in requests.enumerated() {
            switch request.contents {
            case .file(let file): files[index] = file
            case .held: held.append(index)
            }
        }
        // A part file is synced before its record says finalizing.
        var recorded = sync(files, results: &results)
        // A held body's record (its destination) is committed before its part file exists, as for any part file.
        recorded += held
        recorded.sort()
        do {
            try store.saveTransfers(recorded.map { requests[$0].record })
        } catch {
            for index in recorded { results[index] = error }
            return results
        }
        if !held.isEmpty { CrashPoint.reach(CrashPoint.afterHeldBodiesRecorded) }
        var created: [Int: PartFile] = [:]
        for index in held {
            guard case .held(let body, let fresh) = requests[index].contents else { continue }
            do throws(DownloadError) {
                let file = try PartFile(path: requests[index].partPath, mode: fresh ? .createNew : .reuseLeftover)
                created[index] = file
                try file.write(body, at: 0)
            } catch {
                results[index] = error
            }
        }
        defer { for file in created.values { file.close() } }
        let written = sync(created.filter { results[$0.key] == nil }, results: &results)
        var directories: Set<String> = []
        for index in recorded where results[index] == nil && (files[index] != nil || written.contains(index)) {
            do {
                try FileSystem.rename(requests[index].partPath, to: requests[index].destination)
                directories.insert(FileSystem.parent(of: requests[index].destination))
            } catch {
                results[index] = error
            }
        }
        for directory in directories { FileSystem.syncDirectory(directory) }
        CrashPoint.reach(CrashPoint.beforeCompletionRecorded)
        // Durable in place: record them completed, together.
        let placed = recorded.filter { results[$0] == nil }
        do {
            try store.saveLifecycle(placed.map { requests[$0].record })
        } catch {
            // The files are in place. A part file's record says finalizing: the next start records it completed. A
            // held body's says it has part data: the next start fetches the small file again.
            for index in placed { results[index] = error }
        }
        return results
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
