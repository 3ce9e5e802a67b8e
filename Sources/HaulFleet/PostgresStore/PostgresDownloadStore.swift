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
/// Calls are asynchronous, as the protocol's: each awaits its round trips (postgres-nio runs them on its event
/// loops; nothing blocks a thread), one call at a time per connection (``Lane``, an asynchronous turn): one for
/// claims and leases, one for everything else. Each write is as few round trips as it can be: a group of records is
/// one statement (``PostgresBatchedWrite``), and a single statement needs no `BEGIN` and `COMMIT`.
final class PostgresDownloadStore: DownloadStore {
    /// The table's name: a database may be shared with other applications.
    static let table = "haul_download"
    /// The notification channel every change is announced on.
    static let channel = "haul_download_changed"

    /// This worker's name in leases (`--worker-name`, else `HOST:PID`).
    let owner: String
    /// How long a lease lasts without a heartbeat.
    let leaseTimeout: Duration
    let location: String

    /// Writes and reads of records.
    let data: Lane
    /// Claims, releases and lease renewals, on a connection of their own: a claim never waits behind a group's
    /// write (the manager starts the next download while the finishing group records the last ones).
    let leases: Lane
    /// The hosts' request schedule (`haul_host`), on a connection of its own: a reservation per request never waits
    /// behind a claim or a lease renewal.
    let hosts: Lane
    private let listener: PostgresConnection
    /// How to connect: kept to connect again when the server came back (``probe()``).
    let connectionSettings: PostgresConnection.Configuration
    let logger: Logger
    /// Bumped by every notification: another worker (or this one) changed a record.
    let changes = Atomic<Int>(0)
    /// The downloads whose lease this worker lost since ``lostClaims()`` was last called.
    let lost = Mutex<Set<DownloadID>>([])
    /// The downloads this worker holds a lease on.
    let held = Mutex<Set<DownloadID>>([])
    /// The heartbeat: renews the leases every third of ``leaseTimeout``, as a repeated task of an event loop (the
    /// round trip goes out on the leases' connection of its own, so it waits behind no write). Not a Swift task: a
    /// lease must not lapse because the cooperative pool is busy with the process's other work, and nothing in it
    /// blocks a thread. Cancelled to stop it.
    let heartbeat = Mutex<RepeatedTask?>(nil)
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
        let configuration = try Self.configuration(url)
        connectionSettings = configuration
        let location = location
        nonisolated(nonsending) func connect(_ id: Int) async throws(DownloadError) -> PostgresConnection {
            do {
                return try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id,
                    logger: logger)
            } catch {
                throw .sharedDatabase(location, reason: "cannot connect: \(Self.describe(error))")
            }
        }
        data = Lane(try await connect(1), takesTurns: true)
        leases = Lane(try await connect(3), takesTurns: false)
        hosts = Lane(try await connect(4), takesTurns: false)
        listener = try await connect(2)
        try await migrate()
        // Listening starts before this returns: the statement after it runs once LISTEN has been processed.
        // This worker's own writes are not changes by another writer: its connections' notifications are not counted.
        let own: Set<Int32> = [
            try await Self.backendID(of: data.connection, at: location, logger: logger),
            try await Self.backendID(of: leases.connection, at: location, logger: logger),
        ]
        listener.addListener(channel: Self.channel) { [weak self] _, notification in
            if !own.contains(notification.backendPID) { self?.changes.add(1, ordering: .relaxed) }
        }
        do {
            _ = try await listener.query("SELECT 1", logger: logger).get()
        } catch {
            throw .sharedDatabase(location, reason: "cannot listen for changes: \(Self.describe(error))")
        }
        let interval = TimeAmount.nanoseconds(Int64((leaseTimeout / 3).inSeconds * 1_000_000_000))
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        heartbeat.withLock {
            $0 = loop.scheduleRepeatedAsyncTask(initialDelay: interval, delay: interval) { [weak self] repeated in
                // Holds the store only while it renews: a released store ends the task at its next run.
                guard let store = self else {
                    repeated.cancel()
                    return loop.makeSucceededVoidFuture()
                }
                return store.renewLeases().hop(to: loop)
            }
        }
    }

    deinit {
        heartbeat.withLock { $0?.cancel() }
        // A connection must be closed before it is released: each is kept until its close completes.
        for open in [data.connection, leases.connection, hosts.connection, listener] {
            open.close().whenComplete { _ in _ = open }
        }
    }

    /// The server process of `connection`: notifications name the one whose transaction sent them.
    private static nonisolated(nonsending) func backendID(
        of connection: PostgresConnection, at location: String, logger: Logger
    ) async throws(DownloadError) -> Int32 {
        let rows: [PostgresRow]
        do {
            rows = try await connection.query("SELECT pg_backend_pid()", logger: logger).get().rows
        } catch {
            throw .sharedDatabase(location, reason: describe(error))
        }
        guard let id = try? rows.first?.makeRandomAccess()[0].decode(Int32.self) else {
            throw .sharedDatabase(location, reason: "it did not say which process serves a connection")
        }
        return id
    }

    private static func configuration(_ url: URL) throws(DownloadError) -> PostgresConnection.Configuration {
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
        let tls: PostgresConnection.Configuration.TLS
        switch mode {
        case "disable":
            tls = .disable
        case "require", "verify-ca", "verify-full":
            do {
                var client = TLSConfiguration.makeClientConfiguration()
                if mode == "require" { client.certificateVerification = .none }  // libpq's meaning of require
                tls = .require(try NIOSSLContext(configuration: client))
            } catch {
                throw .invalidRequest("cannot set up TLS for the database: \(error)")
            }
        default:
            throw .invalidRequest("sslmode=\(mode) is not one of disable, require, verify-ca, verify-full")
        }
        return PostgresConnection.Configuration(
            host: host, port: url.port ?? 5432, username: user.removingPercentEncoding ?? user,
            password: url.password?.removingPercentEncoding, database: database, tls: tls)
    }

    /// Statements sent to the database so far, each one round trip (for tests and benchmarks).
    var statementCount: Int { sent.load(ordering: .relaxed) }
}
