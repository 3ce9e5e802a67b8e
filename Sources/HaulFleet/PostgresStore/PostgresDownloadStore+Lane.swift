import PostgresNIO
import Synchronization

extension PostgresDownloadStore {
    /// One connection and its turn: a transaction's statements must not interleave with another's.
    final class Lane: Sendable {
        private let current: Mutex<PostgresConnection>
        /// Taken for each call (awaited, first come first served).
        let calls = AsyncTurn()

        init(_ connection: PostgresConnection) { current = Mutex(connection) }

        var connection: PostgresConnection { current.withLock { $0 } }

        /// Puts `connection` in place of a closed one (``PostgresDownloadStore/probe()``).
        func replace(with connection: PostgresConnection) {
            let old = current.withLock { current in
                defer { current = connection }
                return current
            }
            old.close().whenComplete { _ in _ = old }
        }
    }
}
