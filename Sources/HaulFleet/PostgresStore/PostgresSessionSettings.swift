import Synchronization

/// The session settings every pooled connection must carry before it runs a statement of the store's: today the
/// event targets the outbox trigger reads (`haul.event_targets`). The pool opens and closes connections on its own,
/// so each connection is brought up to date when it is leased: once per connection and change, not per statement.
final class PostgresSessionSettings: Sendable {
    private struct State {
        var eventTargets: String?
        /// Bumped by each change.
        var generation = 0
        /// The generation each open connection (by its pool id) was brought to.
        var applied: [Int: Int] = [:]
    }

    private let state = Mutex(State())

    /// Names `targets` (``PostgresEventOutbox/setting(_:)``) in every session from now on.
    func useEventTargets(_ setting: String) {
        state.withLock { state in
            state.eventTargets = setting
            state.generation += 1
        }
    }

    /// What connection `id` lacks: the targets to set and the generation they are, or nil when it is up to date.
    func pending(for id: Int) -> (eventTargets: String, generation: Int)? {
        state.withLock { state in
            guard let targets = state.eventTargets, state.applied[id] != state.generation else { return nil }
            return (targets, state.generation)
        }
    }

    /// Records that connection `id` carries `generation`; returns whether it is a connection not seen before (whose
    /// close must then be reported with ``forget(_:)``).
    func applied(_ generation: Int, to id: Int) -> Bool {
        state.withLock { state in
            defer { state.applied[id] = max(generation, state.applied[id] ?? 0) }
            return state.applied[id] == nil
        }
    }

    /// Forgets a closed connection.
    func forget(_ id: Int) {
        _ = state.withLock { $0.applied.removeValue(forKey: id) }
    }
}
