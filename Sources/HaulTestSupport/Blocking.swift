import Dispatch

/// Runs blocking work (waiting for a process, generating large files) on a Dispatch thread, so the few threads of
/// Swift's cooperative pool stay free for the tests running alongside.
public func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}
