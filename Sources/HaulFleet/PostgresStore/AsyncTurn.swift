import Synchronization

/// A turn that callers await, first come first served: the asynchronous counterpart of a lock, for work that awaits
/// while it holds the turn (a transaction's statements on one connection). Waiting suspends the task; no thread is
/// blocked.
final class AsyncTurn: Sendable {
    private struct State {
        var taken = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Runs `body` holding the turn, and hands the turn on however `body` ends.
    nonisolated(nonsending) func withTurn<T, Failure: Error>(
        _ body: () async throws(Failure) -> T
    ) async throws(Failure) -> T {
        await take()
        defer { give() }
        return try await body()
    }

    /// Returns once the caller holds the turn; ``give()`` hands it on.
    nonisolated(nonsending) func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.taken else {
                    state.taken = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Gives the turn to the first waiting caller, or frees it.
    func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.taken = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
