import Synchronization

/// Writes the job's columns of downloads that ask at about the same time in one transaction (a group commit), on
/// the thread of the first of them: no hand-off to another thread, and no cooperative thread blocked waiting for
/// the database while another commits.
///
/// The first caller while none is writing leads: it commits every record waiting (its own included), then those
/// that arrived during that commit, until none waits. The others wait, suspended, for the commit that holds their
/// record. A failed commit fails every record in it: the store's errors are the database's (a full disk, a lost
/// file), not one record's.
final class TransferRecorder: Sendable {
    private typealias Waiting = GroupWaiter<DownloadRecord, Void>

    private let commit: @Sendable ([DownloadRecord]) throws(DownloadError) -> Void
    private let waiting = Mutex(GroupQueue<Waiting>())

    /// A recorder that writes each group with `commit` (one transaction; ``DownloadStore/saveTransfers(_:)``).
    init(commit: @escaping @Sendable ([DownloadRecord]) throws(DownloadError) -> Void) {
        self.commit = commit
    }

    /// Transactions written so far (each holds one or more records).
    var commitCount: Int { waiting.withLock { $0.groupCount } }

    /// Records waiting for the commit in progress to end (for tests).
    var waitingCount: Int { waiting.withLock { $0.count } }

    /// Returns once the job's columns of `record` are committed, or throws why not.
    func save(_ record: DownloadRecord) async throws(DownloadError) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let leads = waiting.withLock { $0.add(Waiting(item: record, continuation: continuation)) }
                if leads { lead() }
            }
        } catch let error as DownloadError {
            throw error
        } catch {
            throw .internalError("recording download \(record.downloadID): \(error)")
        }
    }

    /// Commits the waiting records, group by group, until none is left.
    private func lead() {
        while true {
            let group = waiting.withLock { $0.nextGroup() }
            if group.isEmpty { return }
            do {
                try commit(group.map(\.item))
                for waiting in group { waiting.end(nil) }
            } catch {
                for waiting in group { waiting.end(error) }
            }
        }
    }
}
