import HaulKit
import NIOPosix
import PostgresNIO

extension PostgresDownloadStore {
    /// Checks that PostgreSQL answers and takes writes: a transaction that takes the lock an `UPDATE` of the queue
    /// takes (`ROW EXCLUSIVE`, refused in a read-only transaction or on a standby) and rolls back. A connection that
    /// was closed (the server stopped, or restarted) is opened again first, so the worker's reads and writes work
    /// again once the server is back.
    package nonisolated(nonsending) func probe() async throws(DownloadError) {
        for lane in [data, leases] where lane.connection.isClosed {
            do {
                let fresh = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: connectionSettings, id: 4,
                    logger: logger)
                lane.replace(with: fresh)
            } catch {
                throw .sharedDatabase(location, reason: "cannot connect: \(Self.describe(error))")
            }
        }
        try await transaction { send throws(DownloadError) in
            _ = try await send("SET LOCAL statement_timeout = 5000", [])
            _ = try await send("LOCK TABLE \(Self.table) IN ROW EXCLUSIVE MODE NOWAIT", [])
        }
    }
}
