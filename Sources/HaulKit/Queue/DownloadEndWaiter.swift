import Synchronization

/// Waits for many downloads to end together (``DownloadManager/waitUntilEnded(_:)``): fed every event by one
/// handler subscription, it returns once the last of them has completed, failed or been removed, or when the events
/// end (the manager shut down) or the waiting task is cancelled.
final class DownloadEndWaiter: Sendable {
    private struct State {
        var pending: Set<DownloadID>
        var over = false
        var continuation: CheckedContinuation<Void, Never>?

        /// Marks the wait over and hands back the continuation to resume, if the waiter is waiting.
        mutating func endWait() -> CheckedContinuation<Void, Never>? {
            over = true
            defer { continuation = nil }
            return continuation
        }
    }

    private let state: Mutex<State>

    /// Waits for `pending`, which must not be empty.
    init(pending: Set<DownloadID>) {
        state = Mutex(State(pending: pending))
    }

    /// Notes `event`: the end of a download waited for ends the wait once it is the last.
    func receive(_ event: DownloadEvent) {
        switch event.change {
        case .status(.completed), .status(.failed), .status(.removed), .status(.interrupted):
            let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard state.pending.remove(event.id) != nil, state.pending.isEmpty else { return nil }
                return state.endWait()
            }
            waiting?.resume()
        default:
            break
        }
    }

    /// Ends the wait whatever is still pending (the events ended, or the waiting task was cancelled).
    func end() {
        state.withLock { $0.endWait() }?.resume()
    }

    /// Returns once every download has ended, or ``end()`` was called (before or during the wait).
    func untilEnded() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let endedAlready = state.withLock { state in
                    if state.over { return true }
                    state.continuation = continuation
                    return false
                }
                if endedAlready { continuation.resume() }
            }
        } onCancel: {
            end()
        }
    }
}
