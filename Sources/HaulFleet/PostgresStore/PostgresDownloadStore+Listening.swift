import HaulKit
import NIOPosix
import PostgresNIO

/// Hearing other workers' changes: `LISTEN` on a connection outside the pool, opened again whenever it closes.
extension PostgresDownloadStore {
    /// The longest wait between two attempts to open the listener again (the first waits half a second, each next
    /// one twice as long).
    static let listenerRetryLimit = Duration.seconds(10)

    /// Listens for changes on `connection`, and keeps listening: when it closes (the server stopped, restarted or
    /// dropped it), it is opened again. Listening starts before this returns: the statement after `LISTEN` runs once
    /// it has been processed. This store's own writes are not counted: they name its session.
    nonisolated(nonsending) func listen(on connection: PostgresConnection) async throws(DownloadError) {
        let own = sessionName
        connection.addListener(channel: Self.channel) { [weak self] _, notification in
            if notification.payload != own { self?.changes.add(1, ordering: .relaxed) }
        }
        do {
            _ = try await connection.query("SELECT 1", logger: logger).get()
        } catch {
            throw .sharedDatabase(location, reason: "cannot listen for changes: \(Self.describe(error))")
        }
        keepListening(on: connection)
    }

    /// When `connection` closes while the store lives, opens the listener again: every half second at first, then
    /// less often, at most ``listenerRetryLimit`` apart, until it is open or the store is gone.
    private func keepListening(on connection: PostgresConnection) {
        connection.closeFuture.whenComplete { [weak self] _ in
            guard self != nil else { return }
            // Holds the store only while it tries: a released store ends the task at its next attempt.
            Task { [weak self] in
                var wait = Duration.milliseconds(500)
                while !Task.isCancelled {
                    try? await Task.sleep(for: wait)
                    guard let reopened = await self?.reopenedListener(), !reopened else { return }
                    wait = min(wait * 2, Self.listenerRetryLimit)
                }
            }
        }
    }

    /// Whether ``reopenListener()`` succeeded.
    private nonisolated(nonsending) func reopenedListener() async -> Bool {
        do throws(DownloadError) {
            try await reopenListener()
            return true
        } catch {
            logger.debug("cannot listen for changes yet", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Opens the listener's connection again when it was closed, and listens; counts one change, so the worker reads
    /// what others changed while nobody listened. One reopening at a time (the keeper's and a probe's): a second
    /// finds the connection open and does nothing.
    nonisolated(nonsending) func reopenListener() async throws(DownloadError) {
        try await reopening.withTurn { () async throws(DownloadError) in try await reopenListenerInTurn() }
    }

    private nonisolated(nonsending) func reopenListenerInTurn() async throws(DownloadError) {
        guard listener.withLock({ $0.isClosed }) else { return }
        let fresh: PostgresConnection
        do {
            fresh = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: connectionSettings, id: 0,
                logger: logger)
        } catch {
            throw .sharedDatabase(location, reason: "cannot connect: \(Self.describe(error))")
        }
        let old = listener.withLock { listener in
            defer { listener = fresh }
            return listener
        }
        old.close().whenComplete { _ in _ = old }
        try await listen(on: fresh)
        changes.add(1, ordering: .relaxed)
    }
}
