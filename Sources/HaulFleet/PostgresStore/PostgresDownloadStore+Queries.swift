import HaulKit
import Logging
import PostgresNIO

/// Running statements and transactions on the pool's connections, again after a conflict with another transaction,
/// and the pieces of SQL the reads and writes share.
extension PostgresDownloadStore {
    /// Runs `sql` with `binds` ($1, $2, …) and returns its rows and how many it changed: in the turn of the reads and
    /// writes of records when `inOrder` (the default), else at once (claims, leases, the hosts' schedule).
    @discardableResult
    nonisolated(nonsending) func run(
        _ sql: String, _ binds: [StoredValue] = [], inOrder: Bool = true
    ) async throws(DownloadError) -> PostgresQueryResult {
        try await retryingConflicts(inOrder: inOrder) { conflicted throws(DownloadError) in
            try await onConnection { connection throws(DownloadError) in
                try await send(sql, binds, on: connection, conflicted: conflicted)
            }
        }
    }

    /// Attempts of a statement or transaction that conflicts with another transaction (a deadlock, a serialization
    /// failure: PostgreSQL rolls one back, and asks to try again).
    static let conflictAttempts = 4

    /// Runs `call` (in the turn when `inOrder`); again (at most ``conflictAttempts`` times in all, after 10, 20,
    /// 40 ms) when it failed for a conflict with another transaction, which it reports by setting its flag.
    private nonisolated(nonsending) func retryingConflicts<T: Sendable>(
        inOrder: Bool, _ call: (_ conflicted: SharedFlag) async throws(DownloadError) -> T
    ) async throws(DownloadError) -> T {
        var attempt = 1
        while true {
            let conflicted = SharedFlag()
            let result: Result<T, DownloadError>
            do throws(DownloadError) {
                if inOrder {
                    result = .success(
                        try await ordered.withTurn { () async throws(DownloadError) -> T in try await call(conflicted) }
                    )
                } else {
                    result = .success(try await call(conflicted))
                }
            } catch {
                result = .failure(error)
            }
            switch result {
            case .success(let value):
                return value
            case .failure(let error):
                guard attempt < Self.conflictAttempts, conflicted.isSet else { throw error }
                logger.debug("retrying after a conflict", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                // Bounded: at most ``conflictAttempts`` attempts, 70 ms of backoff in all. Not cancellable (the
                // write must still be tried), so the error of a cancelled sleep is ignored.
                try? await Task.sleep(for: .milliseconds(10 << (attempt - 1)))
                attempt += 1
            }
        }
    }

    /// Runs `body` on a connection leased from the pool, brought up to date with the session's settings first.
    ///
    /// The pool refuses a lease to a cancelled task, and fails one that a cancellation reaches while it waits for a
    /// connection; but a stopped job records where it stopped from its cancelled task, and that write must still be
    /// made. So a call from a cancelled task, or one whose lease a cancellation failed, leases in a task of its own,
    /// which is not cancelled, and awaits it (the store's other calls do not pay for that task).
    private nonisolated(nonsending) func onConnection<T: Sendable>(
        _ body: @Sendable (PostgresConnection) async throws(DownloadError) -> T
    ) async throws(DownloadError) -> T {
        if !Task.isCancelled {
            switch await leased(body) {
            case .ran(let result):
                return try result.get()
            case .refused(let reason) where !Task.isCancelled:
                throw .sharedDatabase(location, reason: reason)
            case .refused:
                break  // Refused for the cancellation that came while it waited: leased again below.
            }
        }
        let lease = await withoutActuallyEscaping(body) { body in
            await Task { await self.leased(body) }.value
        }
        switch lease {
        case .ran(let result): return try result.get()
        case .refused(let reason): throw .sharedDatabase(location, reason: reason)
        }
    }

    /// What a lease came to: `body` ran (and succeeded or failed), or the pool gave no connection (it is shut down,
    /// cannot connect, or the caller was cancelled), and why.
    private enum Lease<T: Sendable>: Sendable {
        case ran(Result<T, DownloadError>)
        case refused(String)
    }

    private nonisolated(nonsending) func leased<T: Sendable>(
        _ body: @Sendable (PostgresConnection) async throws(DownloadError) -> T
    ) async -> Lease<T> {
        do {
            return try await client.withConnection { connection in
                do throws(DownloadError) {
                    try await prepare(connection)
                    return .ran(.success(try await body(connection)))
                } catch {
                    return .ran(.failure(error))
                }
            }
        } catch {
            return .refused(Self.describe(error))
        }
    }

    /// Sets on `connection` the session settings it lacks (``PostgresSessionSettings``).
    private nonisolated(nonsending) func prepare(_ connection: PostgresConnection) async throws(DownloadError) {
        guard let pending = session.pending(for: connection.id) else { return }
        try await send(
            "SELECT set_config('haul.event_targets', $1, false)", [.text(pending.eventTargets)], on: connection,
            conflicted: SharedFlag())
        if session.applied(pending.generation, to: connection.id) {
            let id = connection.id
            connection.closeFuture.whenComplete { [session] _ in session.forget(id) }
        }
    }

    /// Runs `body` in one transaction, in the turn of the reads and writes when `inOrder`; `body` sends its statements
    /// with `send`.
    nonisolated(nonsending) func transaction<T: Sendable>(
        inOrder: Bool = true, _ body: @Sendable (_ send: Send) async throws(DownloadError) -> T
    ) async throws(DownloadError) -> T {
        try await retryingConflicts(inOrder: inOrder) { conflicted throws(DownloadError) in
            try await onConnection { connection throws(DownloadError) in
                try await send("BEGIN", [], on: connection, conflicted: conflicted)
                let statements = Send(store: self, connection: connection, conflicted: conflicted)
                do throws(DownloadError) {
                    let result = try await body(statements)
                    try await send("COMMIT", [], on: connection, conflicted: conflicted)
                    return result
                } catch {
                    _ = try? await send("ROLLBACK", [], on: connection, conflicted: SharedFlag())
                    throw error
                }
            }
        }
    }

    /// Sends a transaction's statements on its connection (``transaction(_:)``).
    struct Send: Sendable {
        let store: PostgresDownloadStore
        let connection: PostgresConnection
        /// Set when a statement failed for a conflict with another transaction.
        let conflicted: SharedFlag

        @discardableResult
        nonisolated(nonsending) func callAsFunction(
            _ sql: String, _ binds: [StoredValue]
        ) async throws(DownloadError) -> PostgresQueryResult {
            try await store.send(sql, binds, on: connection, conflicted: conflicted)
        }
    }

    /// Sends one statement on `connection`; sets `conflicted` when it failed for a conflict with another transaction.
    @discardableResult
    fileprivate nonisolated(nonsending) func send(
        _ sql: String, _ binds: [StoredValue], on connection: PostgresConnection, conflicted: SharedFlag
    ) async throws(DownloadError) -> PostgresQueryResult {
        var bindings = PostgresBindings(capacity: binds.count)
        for value in binds {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .boolean(let value): bindings.append(value)
            case .date(let value): bindings.append(value)
            }
        }
        sent.add(1, ordering: .relaxed)
        do {
            return try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).get()
        } catch {
            // deadlock_detected, serialization_failure
            if let state = (error as? PSQLError)?.serverInfo?[.sqlState], state == "40P01" || state == "40001" {
                conflicted.set()
            }
            throw .sharedDatabase(location, reason: Self.describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            return error.serverInfo?[.message] ?? "\(error.code)"
        }
        return String(describing: error)
    }

    /// The ids as bound values, ``SQLDialect/idsPerStatement`` a statement.
    static func idChunks(_ ids: [DownloadID]) -> [[StoredValue]] {
        SQLDialect.postgres.idChunks(ids).map { $0.map(StoredValue.integer) }
    }
}
