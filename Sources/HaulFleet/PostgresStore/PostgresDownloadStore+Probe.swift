import HaulKit
import PostgresNIO

extension PostgresDownloadStore {
    /// How long a probe waits at most: the pool waits for a connection while it tries to open one (up to a minute
    /// when the server is down), and a probe must answer sooner.
    static let probeLimit = Duration.seconds(10)

    /// Checks that PostgreSQL answers and takes writes: a transaction that takes the lock an `UPDATE` of the queue
    /// takes (`ROW EXCLUSIVE`, refused in a read-only transaction or on a standby) and rolls back, within
    /// ``probeLimit``. The pool opens connections again by itself once the server is back, and so does the listener
    /// (``keepListening(on:)``); a probe also opens the listener again at once.
    package nonisolated(nonsending) func probe() async throws(DownloadError) {
        let outcome = await withTaskGroup(of: Result<Void, DownloadError>?.self) { group in
            group.addTask {
                do throws(DownloadError) {
                    try await self.reopenListener()
                    try await self.transaction(inOrder: false) { send throws(DownloadError) in
                        _ = try await send("SET LOCAL statement_timeout = 5000", [])
                        _ = try await send("LOCK TABLE \(Self.table) IN ROW EXCLUSIVE MODE NOWAIT", [])
                    }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: Self.probeLimit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let outcome else {
            throw .sharedDatabase(location, reason: "it did not answer within \(Self.probeLimit)")
        }
        try outcome.get()
    }
}
