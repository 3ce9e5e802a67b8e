import Foundation
import HaulKit
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// The shared ``DownloadStore``: one PostgreSQL table that many workers on many machines drain together.
///
/// The columns are ``DownloadColumn``'s (the schema is derived from it and checked at open), plus a lease: the
/// worker holding a download (``owner``) and until when. A claim takes a download whose lease is free or expired
/// (`FOR UPDATE SKIP LOCKED`, so workers never wait on each other's rows); a heartbeat renews this worker's leases
/// every third of ``leaseTimeout``; a worker that dies loses its leases when they expire, and another takes its
/// downloads over. A worker that lost a lease can no longer write that download's progress (checkpoints and
/// transfer columns are written only under the lease). Every write but a lease's alone (a claim, a renewal, a release)
/// notifies the workers (`LISTEN/NOTIFY`); ``changeToken()`` counts the notifications of other workers' writes.
///
/// Calls are asynchronous, as the protocol's: each awaits its round trips on a connection of postgres-nio's pool
/// (``PostgresClient``, which opens connections as they are needed and again after the server came back; nothing
/// blocks a thread). Reads and writes of records take turns (``ordered``, first come first served), so they reach the
/// database in the order they were made, as SQLite's single writer does; claims, leases and the hosts' schedule do not
/// wait for them, each on a connection of its own from the pool. Each write is as few round trips as it can be: a
/// group of records is one statement (``PostgresBatchedWrite``), and a single statement needs no `BEGIN` and `COMMIT`.
final class PostgresDownloadStore: DownloadStore {
    /// The table's name: a database may be shared with other applications.
    static let table = "haul_download"
    /// The notification channel every change is announced on.
    static let channel = "haul_download_changed"
    /// Connections the pool opens at most: one for the ordered reads and writes, the others for claims, leases and
    /// the hosts' schedule at the same time.
    static let maximumConnections = 4

    /// This worker's name in leases (`--worker-name`, else `HOST:PID`).
    let owner: String
    /// How long a lease lasts without a heartbeat.
    let leaseTimeout: Duration
    let location: String

    /// The pool every statement runs on.
    let client: PostgresClient
    /// Runs the pool (``PostgresClient/run()``) as long as the store lives; cancelled to close it.
    private let pool: Task<Void, Never>
    /// The turn of the reads and writes of records: one at a time, in the order they were made.
    let ordered = AsyncTurn()
    /// The session settings every pooled connection carries.
    let session = PostgresSessionSettings()
    /// This store's connections' `application_name`, unique to it: the notification trigger sends the writer's name,
    /// so the listener can tell this store's own writes from other workers'.
    let sessionName: String
    /// The connection that listens for changes, outside the pool (a listening session must stay open); opened again
    /// when it closes (``keepListening(on:)``).
    let listener: Mutex<PostgresConnection>
    /// The turn of reopening the listener: one at a time.
    let reopening = AsyncTurn()
    /// How to connect the listener.
    let connectionSettings: PostgresConnection.Configuration
    let logger: Logger
    /// Bumped by every notification: another worker changed a record.
    let changes = Atomic<Int>(0)
    /// The downloads whose lease this worker lost since ``lostClaims()`` was last called.
    let lost = Mutex<Set<DownloadID>>([])
    /// The downloads this worker holds a lease on.
    let held = Mutex<Set<DownloadID>>([])
    /// The heartbeat: renews the leases every third of ``leaseTimeout``. Its round trip takes no turn, so it waits
    /// behind no write. Cancelled to stop it.
    let heartbeat = Mutex<Task<Void, Never>?>(nil)
    /// Statements sent so far: each is a round trip, which is what a shared queue's writes cost.
    let sent = Atomic<Int>(0)
    /// Builds the batched `INSERT`s and `UPDATE`s.
    let writer: PostgresBatchedWrite

    /// Connects to the database `url` names (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`, `?sslmode=require` for
    /// TLS) and brings the schema up to date.
    init(url: URL, owner: String, leaseTimeout: Duration, logger: Logger) async throws(DownloadError) {
        location = ProxySettings.masked(url.absoluteString)
        self.owner = owner
        self.leaseTimeout = leaseTimeout
        self.logger = logger
        writer = PostgresBatchedWrite(table: Self.table, owner: owner)
        sessionName = "haul " + UUID().uuidString.lowercased()
        let (settings, poolSettings) = try Self.configurations(url, sessionName: sessionName)
        connectionSettings = settings
        client = PostgresClient(configuration: poolSettings, backgroundLogger: logger)
        let client = client
        pool = Task { await client.run() }
        let location = location
        do {
            listener = Mutex(
                try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: settings, id: 0, logger: logger))
        } catch {
            pool.cancel()
            throw .sharedDatabase(location, reason: "cannot connect: \(Self.describe(error))")
        }
        // A failure from here on releases the store, whose deinit closes the pool and the listener.
        try await migrate()
        try await listen(on: listener.withLock { $0 })
        heartbeat.withLock {
            $0 = Task { [weak self, interval = leaseTimeout / 3] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    // Holds the store only while it renews: a released store ends the task at its next run.
                    guard !Task.isCancelled, let store = self else { return }
                    await store.renewLeases()
                }
            }
        }
    }

    deinit { close() }

    /// Stops the heartbeat, the listener and the pool (its connections close as their statements end).
    private func close() {
        heartbeat.withLock { $0?.cancel() }
        pool.cancel()
        // A connection must be closed before it is released: it is kept until its close completes.
        let open = listener.withLock { $0 }
        open.close().whenComplete { _ in _ = open }
    }

    /// The settings of the listener's connection and of the pool, from `url`; every session is named `sessionName`.
    private static func configurations(
        _ url: URL, sessionName: String
    ) throws(DownloadError) -> (PostgresConnection.Configuration, PostgresClient.Configuration) {
        guard ["postgres", "postgresql"].contains(url.scheme?.lowercased() ?? ""), let host = url.host,
            let user = url.user
        else {
            throw .invalidRequest(
                "'\(ProxySettings.masked(url.absoluteString))' is not a database URL like "
                    + "postgres://USER:PASSWORD@HOST:5432/DATABASE")
        }
        let database = url.path.split(separator: "/").first.map(String.init)
        let mode =
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
            .first { $0.name == "sslmode" }?.value ?? "disable"
        let username = user.removingPercentEncoding ?? user
        let password = url.password?.removingPercentEncoding
        let port = url.port ?? 5432
        var connection = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
        var pool = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
        switch mode {
        case "disable":
            break
        case "require", "verify-ca", "verify-full":
            var client = TLSConfiguration.makeClientConfiguration()
            if mode == "require" { client.certificateVerification = .none }  // libpq's meaning of require
            do {
                connection.tls = .require(try NIOSSLContext(configuration: client))
            } catch {
                throw .invalidRequest("cannot set up TLS for the database: \(error)")
            }
            pool.tls = .require(client)
        default:
            throw .invalidRequest("sslmode=\(mode) is not one of disable, require, verify-ca, verify-full")
        }
        connection.options.additionalStartupParameters = [("application_name", sessionName)]
        pool.options.additionalStartupParameters = connection.options.additionalStartupParameters
        pool.options.minimumConnections = 1
        pool.options.maximumConnections = maximumConnections
        return (connection, pool)
    }

    /// Statements sent to the database so far, each one round trip (for tests and benchmarks).
    var statementCount: Int { sent.load(ordering: .relaxed) }
}
