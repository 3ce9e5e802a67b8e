import PostgresNIO
import Synchronization

extension PostgresDownloadStore {
    /// One connection and its turn: a transaction's statements must not interleave with another's.
    final class Lane: Sendable {
        private let current: Mutex<PostgresConnection>
        /// Taken for each call (awaited, first come first served) when ``takesTurns``.
        let calls = AsyncTurn()
        /// Whether calls take turns: only a lane that runs transactions needs them (a transaction's statements must
        /// not interleave with another call's). A lane of single statements hands each to the connection at once:
        /// postgres-nio queues them and sends the next as soon as the last is answered, with no task to wake between.
        let takesTurns: Bool

        init(_ connection: PostgresConnection, takesTurns: Bool) {
            current = Mutex(connection)
            self.takesTurns = takesTurns
        }

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
