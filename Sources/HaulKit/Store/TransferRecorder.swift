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
    private struct Waiting {
        var record: DownloadRecord
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var leading = false
        var commits = 0
    }

    private let commit: @Sendable ([DownloadRecord]) throws(DownloadError) -> Void
    private let state = Mutex(State())

    /// A recorder that writes each group with `commit` (one transaction; ``DownloadStore/saveTransfers(_:)``).
    init(commit: @escaping @Sendable ([DownloadRecord]) throws(DownloadError) -> Void) {
        self.commit = commit
    }

    /// Transactions written so far (each holds one or more records).
    var commitCount: Int { state.withLock { $0.commits } }

    /// Records waiting for the commit in progress to end (for tests).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Returns once the job's columns of `record` are committed, or throws why not.
    func save(_ record: DownloadRecord) async throws(DownloadError) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let leads = state.withLock { state in
                    state.waiting.append(Waiting(record: record, continuation: continuation))
                    defer { state.leading = true }
                    return !state.leading
                }
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
            let group = state.withLock { state in
                defer { state.waiting.removeAll(keepingCapacity: true) }
                if state.waiting.isEmpty { state.leading = false } else { state.commits += 1 }
                return state.waiting
            }
            if group.isEmpty { return }
            do {
                try commit(group.map(\.record))
                for waiting in group { waiting.continuation.resume() }
            } catch {
                for waiting in group { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
