import HaulKit
import NIOPosix
import PostgresNIO

extension PostgresDownloadStore {
    /// Checks that PostgreSQL answers and takes writes: a transaction that takes the lock an `UPDATE` of the queue
    /// takes (`ROW EXCLUSIVE`, refused in a read-only transaction or on a standby) and rolls back. A connection that
    /// was closed (the server stopped, or restarted) is opened again first, so the worker's reads and writes work
    /// again once the server is back.
    package func probe() throws(DownloadError) {
        for lane in [data, leases] where lane.connection.isClosed {
            do {
                let fresh = try PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: connectionSettings, id: 4,
                    logger: logger
                ).wait()
                lane.replace(with: fresh)
            } catch {
                throw .sharedDatabase(location, reason: "cannot connect: \(Self.describe(error))")
            }
        }
        try transaction { send throws(DownloadError) in
            _ = try send("SET LOCAL statement_timeout = 5000", [])
            _ = try send("LOCK TABLE \(Self.table) IN ROW EXCLUSIVE MODE NOWAIT", [])
        }
    }
}
