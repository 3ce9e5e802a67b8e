import Foundation

/// Runs blocking work (waiting for a process, generating large files) on a thread of its own, so the few threads of
/// Swift's cooperative pool stay free for the tests running alongside. Not on Dispatch's global queue: on Linux that
/// queue's threads are the cooperative pool's own (as many as cores), so work that blocks there stops every test.
public func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
