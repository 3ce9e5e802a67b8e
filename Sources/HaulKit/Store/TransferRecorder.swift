import Synchronization

/// Writes the job's columns of downloads that ask at about the same time in one transaction (a group commit).
///
/// The first caller while none is writing starts a leader task: it awaits the commit of every record waiting (the
/// first caller's included), then of those that arrived during that commit, until none waits. Every caller waits,
/// suspended, for the commit that holds its record. The store's I/O runs where the store runs it (never on the caller's thread). A failed commit
/// fails every record in it: the store's errors are the database's (a full disk, a lost file), not one record's.
final class TransferRecorder: Sendable {
    private typealias Waiting = GroupWaiter<DownloadRecord, Void>

    private let commit: @Sendable ([DownloadRecord]) async throws(DownloadError) -> Void
    private let waiting = Mutex(GroupQueue<Waiting>())

    /// A recorder that writes each group with `commit` (one transaction; ``DownloadStore/saveTransfers(_:)``).
    init(commit: @escaping @Sendable ([DownloadRecord]) async throws(DownloadError) -> Void) {
        self.commit = commit
    }

    /// Transactions written so far (each holds one or more records).
    var commitCount: Int { waiting.withLock { $0.groupCount } }

    /// Records waiting for the commit in progress to end (for tests).
    var waitingCount: Int { waiting.withLock { $0.count } }

    /// Returns once the job's columns of `record` are committed, or throws why not.
    nonisolated(nonsending) func save(_ record: DownloadRecord) async throws(DownloadError) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let leads = waiting.withLock { $0.add(Waiting(item: record, continuation: continuation)) }
                // The leader's own record is in the first group: its continuation is resumed by its own commit,
                // awaited in a task of its own (a continuation's body cannot suspend).
                if leads { Task { await self.lead() } }
            }
        } catch let error as DownloadError {
            throw error
        } catch {
            throw .internalError("recording download \(record.downloadID): \(error)")
        }
    }

    /// Commits the waiting records, group by group, until none is left.
    private nonisolated(nonsending) func lead() async {
        while true {
            let group = waiting.withLock { $0.nextGroup() }
            if group.isEmpty { return }
            do {
                try await commit(group.map(\.item))
                for waiting in group { waiting.end(nil) }
            } catch {
                for waiting in group { waiting.end(error) }
            }
        }
    }
}
