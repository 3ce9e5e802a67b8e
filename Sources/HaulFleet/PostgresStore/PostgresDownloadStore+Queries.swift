import HaulKit
import Logging
import PostgresNIO

/// Running statements and transactions on a lane, again after a conflict with another transaction, and the pieces
/// of SQL the reads and writes share.
extension PostgresDownloadStore {
    /// Runs `sql` with `binds` ($1, $2, …) on `lane` (default: the data connection) and returns its rows and how many
    /// it changed.
    @discardableResult
    nonisolated(nonsending) func run(
        _ sql: String, _ binds: [StoredValue] = [], on lane: Lane? = nil
    ) async throws(DownloadError)
        -> PostgresQueryResult
    {
        let lane = lane ?? data
        return try await retryingConflicts(on: lane) { conflict throws(DownloadError) in
            try await unlockedRun(sql, binds, on: lane.connection, conflict: &conflict)
        }
    }

    /// Attempts of a statement or transaction that conflicts with another transaction (a deadlock, a serialization
    /// failure: PostgreSQL rolls one back, and asks to try again).
    static let conflictAttempts = 4

    /// Runs `call` holding `lane`; again (at most ``conflictAttempts`` times in all, after 10, 20, 40 ms) when it
    /// failed for a conflict with another transaction.
    private nonisolated(nonsending) func retryingConflicts<T>(
        on lane: Lane, _ call: (_ conflict: inout Bool) async throws(DownloadError) -> T
    ) async throws(DownloadError) -> T {
        var attempt = 1
        while true {
            if lane.takesTurns { await lane.calls.take() }
            var conflicted = false
            let result: Result<T, DownloadError>
            do throws(DownloadError) {
                result = .success(try await call(&conflicted))
            } catch {
                result = .failure(error)
            }
            if lane.takesTurns { lane.calls.give() }
            switch result {
            case .success(let value):
                return value
            case .failure(let error):
                guard attempt < Self.conflictAttempts, conflicted else { throw error }
                logger.debug("retrying after a conflict", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                // Bounded: at most ``conflictAttempts`` attempts, 70 ms of backoff in all. Not cancellable (the
                // write must still be tried), so the error of a cancelled sleep is ignored.
                try? await Task.sleep(for: .milliseconds(10 << (attempt - 1)))
                attempt += 1
            }
        }
    }

    /// Runs `body` in one transaction; `body` sends its statements with `send`.
    nonisolated(nonsending) func transaction<T>(
        _ body: (_ send: Send) async throws(DownloadError) -> T
    ) async throws(DownloadError) -> T {
        let connection = data.connection
        return try await retryingConflicts(on: data) { conflict throws(DownloadError) in
            try await unlockedRun("BEGIN", [], on: connection, conflict: &conflict)
            let send = Send(store: self, connection: connection)
            do throws(DownloadError) {
                let result = try await body(send)
                conflict = conflict || send.conflicted.isSet
                try await unlockedRun("COMMIT", [], on: connection, conflict: &conflict)
                return result
            } catch {
                conflict = conflict || send.conflicted.isSet
                var ignored = false
                _ = try? await unlockedRun("ROLLBACK", [], on: connection, conflict: &ignored)
                throw error
            }
        }
    }

    /// Sends a transaction's statements on its connection (``transaction(_:)``).
    struct Send: Sendable {
        let store: PostgresDownloadStore
        let connection: PostgresConnection
        /// Whether a statement failed for a conflict with another transaction.
        let conflicted = SharedFlag()

        @discardableResult
        nonisolated(nonsending) func callAsFunction(
            _ sql: String, _ binds: [StoredValue]
        ) async throws(DownloadError) -> PostgresQueryResult {
            var conflict = false
            defer { if conflict { conflicted.set() } }
            return try await store.unlockedRun(sql, binds, on: connection, conflict: &conflict)
        }
    }

    @discardableResult
    fileprivate nonisolated(nonsending) func unlockedRun(
        _ sql: String, _ binds: [StoredValue], on connection: PostgresConnection, conflict: inout Bool
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
                conflict = true
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
