import GRDB

/// How the embedded store's calls reach SQLite: scheduled on GRDB's own queues (its serial writer queue, its reader
/// queues) and awaited, so no cooperative thread and no actor waits for a commit (see "Where blocking I/O runs" in
/// docs/architecture.md).
///
/// GRDB's callback API is used rather than its `async` one, which interrupts a statement when the caller's task is
/// cancelled: a job that was stopped (its task cancelled) must still record where it stopped.
extension DatabasePool {
    /// Runs `body` in a write transaction on the writer queue and returns its result once committed.
    nonisolated(nonsending) func awaitingWrite<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            asyncWrite(body) { _, result in continuation.resume(returning: result) }
        }
        return try result.get()
    }

    /// Runs `body` outside a transaction on the writer queue.
    nonisolated(nonsending) func awaitingWriteWithoutTransaction<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            asyncWriteWithoutTransaction { db in continuation.resume(returning: Result { try body(db) }) }
        }
        return try result.get()
    }

    /// Runs `body` in a read transaction on a reader queue.
    nonisolated(nonsending) func awaitingRead<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await awaitingReader(asyncRead, body)
    }

    /// Runs `body` on a reader queue outside a transaction, for reads that need no snapshot across statements: SQLite
    /// runs each statement in a read transaction of its own, and opening one explicitly (`BEGIN`, then `COMMIT`, each
    /// parsed again) cost more than a claim's one statement.
    nonisolated(nonsending) func awaitingReadWithoutTransaction<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await awaitingReader(asyncUnsafeRead, body)
    }

    /// Runs `body` with the connection `schedule` hands over on a reader queue (GRDB's `asyncRead` or
    /// `asyncUnsafeRead`).
    private nonisolated(nonsending) func awaitingReader<T: Sendable>(
        _ schedule: (@escaping @Sendable (Result<Database, any Error>) -> Void) -> Void,
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            schedule { db in continuation.resume(returning: Result { try body(db.get()) }) }
        }
        return try result.get()
    }
}
