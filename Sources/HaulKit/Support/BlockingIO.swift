import NIOPosix

/// Runs blocking file-system work (fsync, SQLite commits) on NIO's blocking-I/O threads, so it never holds one of
/// the few cooperative threads (or an event loop: ``TaskPlacement``), and runs it to the end even when the calling
/// task is cancelled: a checkpoint taken while a download is being paused must still happen.
func onBlockingPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await Task { try await NIOThreadPool.singleton.runIfActive(body) }.value
}
