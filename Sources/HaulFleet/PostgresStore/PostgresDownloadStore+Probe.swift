import HaulKit
import PostgresNIO

extension PostgresDownloadStore {
    /// How long a probe waits at most: the pool waits for a connection while it tries to open one (up to a minute
    /// when the server is down), a statement on a connection whose server went silent is not answered, and a probe
    /// must answer sooner.
    static let probeLimit = Duration.seconds(10)

    /// Checks that PostgreSQL answers and takes writes: a transaction that takes the lock an `UPDATE` of the queue
    /// takes (`ROW EXCLUSIVE`, refused in a read-only transaction or on a standby) and rolls back, within
    /// ``probeLimit``. The pool opens connections again by itself once the server is back, and so does the listener
    /// (``keepListening(on:)``); a probe also opens the listener again at once.
    ///
    /// The check runs in a task of its own, raced against the limit: past it the probe answers, and the check is
    /// cancelled and left to end by itself (a statement already sent is not interrupted by a cancellation).
    package nonisolated(nonsending) func probe() async throws(DownloadError) {
        let check = Task { () async -> Result<Void, DownloadError> in
            do throws(DownloadError) {
                try await self.reopenListener()
                guard !Task.isCancelled else {
                    return .failure(.sharedDatabase(self.location, reason: "no answer in time"))
                }
                try await self.transaction(inOrder: false) { send throws(DownloadError) in
                    _ = try await send("SET LOCAL statement_timeout = 5000", [])
                    _ = try await send("LOCK TABLE \(Self.table) IN ROW EXCLUSIVE MODE NOWAIT", [])
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        let answered = SharedFlag()
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, DownloadError>?, Never>) in
            let timer = Task {
                try? await Task.sleep(for: Self.probeLimit)
                if answered.setFirst() { continuation.resume(returning: nil) }
            }
            Task {
                let result = await check.value
                timer.cancel()
                if answered.setFirst() { continuation.resume(returning: result) }
            }
        }
        guard let outcome else {
            check.cancel()
            throw .sharedDatabase(location, reason: "it did not answer within \(Self.probeLimit)")
        }
        try outcome.get()
    }
}
