import Foundation
import HaulTestSupport
import Logging
import Testing

@testable import HaulFleet
@testable import HaulKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ``PostgresDownloadStore`` against a private PostgreSQL cluster: the same records as SQLite, and leases that keep
/// one download on one worker.
@Suite(
    "Shared PostgreSQL queue",
    .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"))
struct PostgresStoreTests {
    static let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    static func store(_ url: URL, owner: String, lease: Duration = .seconds(30)) async throws -> PostgresDownloadStore {
        try await PostgresDownloadStore(url: url, owner: owner, leaseTimeout: lease, logger: logger)
    }

    @Test("records read back exactly as written, every column; the schema is made once and checked")
    func roundTrip() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let store = try await Self.store(url, owner: "a")
        let written = try await store.insert(
            [
                DownloadStoreTests.queued("http://a/1"), try DownloadStoreTests.everyColumnSet(),
                DownloadStoreTests.queued("http://a/2", options: .init(priority: 7)),
            ])
        #expect(written.map(\.id) == [1, 2, 3])
        #expect(try await store.fetchAll() == written)
        #expect(try await store.fetch(written[1].downloadID) == written[1])
        #expect(try await store.fetchUpdated(since: DownloadStoreTests.date.addingTimeInterval(1)) == [written[1]])
        #expect(try await store.count() == 3)
        #expect(try await store.fetchIDs() == Set(written.map(\.downloadID)))

        var changed = written[0]
        changed.state = .paused
        changed.updatedAt = DownloadStoreTests.date.addingTimeInterval(9)
        try await store.saveLifecycle([changed])
        #expect(try await store.fetch(changed.downloadID)?.state == .paused)
        try await store.delete([written[2].downloadID])
        #expect(try await store.count() == 2)

        // A second worker opens the same schema without migrating it again.
        let other = try await Self.store(url, owner: "b")
        #expect(try await other.fetchAll().map(\.id) == [1, 2])
        #expect(
            try server.sql("SELECT count(*) FROM haul_schema_migrations", database: url.lastPathComponent)
                == "\(PostgresDownloadStore.migrations.count)")
        // A table that is not the expected one is refused with what differs.
        try server.sql("ALTER TABLE haul_download ADD COLUMN surprise TEXT", database: url.lastPathComponent)
        await #expect(throws: DownloadError.self) { _ = try await Self.store(url, owner: "c") }
        await server.stop()
    }

    @Test("queries: by id, by URL base, unfinished, completed, counts, ids; each in id order, as SQLite answers them")
    func queries() async throws {
        let server = try await PostgresServer.start()
        try await DownloadStoreContractTests.expectQueries(try Self.store(try await server.makeDatabase(), owner: "a"))
        await server.stop()
    }

    @Test(
        "the records URLs may ask for again: by their URL up to the query, many bases in chunks, LIKE's wildcards none")
    func recordsByURLBase() async throws {
        let server = try await PostgresServer.start()
        let store = try await Self.store(try await server.makeDatabase(), owner: "a")
        _ = try await store.insert(
            ["http://a/f", "http://a/f?sig=1", "http://a/fx", "http://a/f", "http://a/g", "http://a/%_?q"].map {
                DownloadStoreTests.queued($0)
            })
        #expect(try await store.fetchRecords(urlBases: ["http://a/f"]).map(\.id) == [1, 2, 4], "not /fx: no query")
        // A base with LIKE's wildcards matches only itself.
        #expect(
            try await store.fetchRecords(urlBases: ["http://a/g", "http://a/f", "http://a/%_", "http://a/_"]).map(\.id)
                == [1, 2, 4, 5, 6])
        #expect(try await store.fetchRecords(urlBases: []).isEmpty)
        // More bases than one statement takes: read in chunks, each record once.
        let many = (0..<2_500).map { "http://b/\($0)" } + ["http://a/g"]
        #expect(try await store.fetchRecords(urlBases: many).map(\.id) == [5])
        await server.stop()
    }

    @Test("a checkpoint never writes over a record the finishing group has taken")
    func checkpointSparesFinalizing() async throws {
        let server = try await PostgresServer.start()
        let store = try await Self.store(try await server.makeDatabase(), owner: "a")
        try await DownloadStoreTests.expectCheckpointSparesFinalizing(store) { id in
            #expect(await store.claim(id, share: Self.one) == .granted(connections: 1))
        }
        await server.stop()
    }

    @Test("one transaction records a group completed and the next group's transfers, each with only its columns")
    func lifecycleAndTransfers() async throws {
        let server = try await PostgresServer.start()
        try await DownloadStoreTests.expectLifecycleAndTransfers(
            try Self.store(try await server.makeDatabase(), owner: "a"))
        await server.stop()
    }

    /// One connection to host `a`, of at most 8.
    static let one = HostShare(host: "a", wanted: 1, limit: 8)

    @Test("one worker holds a download; its lease expires when it stops renewing; a lost lease writes nothing")
    func leases() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        // Leases of 12 s, renewed every 4 s: a renewal may come 8 s late (a loaded CI run starved one of 4 s).
        let a = try await Self.store(url, owner: "a", lease: .seconds(12))
        let b = try await Self.store(url, owner: "b", lease: .seconds(12))
        let record = try #require(try await a.insert([DownloadStoreTests.queued("http://a/1")]).first)
        let id = record.downloadID

        #expect(await a.claim(id, share: Self.one) == .granted(connections: 1))
        #expect(await b.claim(id, share: Self.one) == .refused, "held by a")
        #expect(await b.isClaimedElsewhere(id))
        #expect(await !a.isClaimedElsewhere(id))
        // a keeps it past its lease's length: the heartbeat renews it.
        try await Task.sleep(for: .seconds(15))
        #expect(await b.claim(id, share: Self.one) == .refused, "renewed by a's heartbeat")
        #expect(try await a.checkpoint(id, generation: 0, durableBytes: 10, segments: nil, bootID: "x"))

        // a stops renewing, as a worker that died: after the lease, b takes the download over.
        let dead = a
        dead.stopRenewingLeases()
        try await Task.sleep(for: .seconds(13))
        #expect(await b.claim(id, share: Self.one) == .granted(connections: 1), "a's lease expired")
        #expect(try await dead.checkpoint(id, generation: 0, durableBytes: 99, segments: nil, bootID: "x") == false)
        #expect(try await b.fetch(id)?.transfer.durableBytes == 10, "the worker that lost the lease wrote nothing")
        var transfer = try #require(try await b.fetch(id))
        transfer.transfer.durableBytes = 77
        try await dead.saveTransfers([transfer])
        #expect(try await b.fetch(id)?.transfer.durableBytes == 10)
        await b.release(id)
        #expect(await !dead.isClaimedElsewhere(id))
        await server.stop()
    }

    @Test("the workers' claims on one host never add up to more connections than its limit")
    func hostShares() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        // Leases of 12 s (renewed every 4 s), so none runs out under a loaded run before the test lets it.
        let a = try await Self.store(url, owner: "a", lease: .seconds(12))
        let b = try await Self.store(url, owner: "b", lease: .seconds(12))
        let ids = try await a.insert((1...5).map { DownloadStoreTests.queued("http://mirror/\($0)") }).map(\.downloadID)
        func share(_ wanted: Int, _ host: String = "mirror") -> HostShare {
            .init(host: host, wanted: wanted, limit: 3)
        }

        #expect(await a.claim(ids[0], share: share(2)) == .granted(connections: 2))
        #expect(await b.claim(ids[1], share: share(2)) == .granted(connections: 1), "one connection was left")
        #expect(await a.widenClaim(ids[0], share: share(3)) == 2, "a split gets no more than the host has left")
        #expect(await b.widenClaim(ids[0], share: share(3)) == 1, "only the holder widens a claim")
        #expect(await b.claim(ids[2], share: share(1)) == .hostBusy)
        #expect(await a.claim(ids[2], share: share(1)) == .hostBusy, "the limit is the fleet's, not a worker's")
        #expect(await b.claim(ids[3], share: share(4, "other")) == .granted(connections: 3), "another host has its own")
        #expect(await a.claim(ids[1], share: share(1)) == .refused, "held by b: refused, whatever the host")
        await a.release(ids[0])
        #expect(await b.claim(ids[2], share: share(4)) == .granted(connections: 2), "a's two connections were released")

        // Connections of a worker that died come back with its leases.
        b.stopRenewingLeases()
        #expect(await a.claim(ids[4], share: share(1)) == .hostBusy)
        try await Task.sleep(for: .seconds(13))
        #expect(await a.claim(ids[4], share: share(5)) == .granted(connections: 3))
        await server.stop()
    }

    @Test("a group of records is written in one statement, not one each in a transaction; the last of an id wins")
    func batchedWrites() async throws {
        let server = try await PostgresServer.start()
        let store = try await Self.store(try await server.makeDatabase(), owner: "a")
        // One record: one statement, no transaction.
        var sent = store.statementCount
        let first = try await store.insert([DownloadStoreTests.queued("http://a/0")])
        #expect(store.statementCount - sent == 1)
        // 2,500: the ids in one query, three INSERTs of at most 1,000 rows, in one transaction.
        var records = (1...2_500).map { DownloadStoreTests.queued("http://a/\($0)") }
        records[1_200] = try DownloadStoreTests.everyColumnSet()
        sent = store.statementCount
        let inserted = try await store.insert(records)
        #expect(store.statementCount - sent == 6)
        #expect(inserted.map(\.id) == (2...2_501).map { Int64($0) })
        #expect(try await store.fetchAll() == first + inserted)

        // Job columns of 87 records, each its own values: one statement.
        let transfers = DownloadStoreTests.variedTransfers(inserted.prefix(87))
        sent = store.statementCount
        try await store.saveTransfers(transfers)
        #expect(store.statementCount - sent == 1)
        #expect(await Array(try store.fetchAll()[1...87]) == transfers)

        // The same id twice in one call: the last is written. A group completed and the next group's transfers
        // (different records): one statement.
        var paused = transfers[1]
        paused.state = .paused
        var completed = transfers[1]
        completed.state = .completed
        completed.completedAt = DownloadStoreTests.date.addingTimeInterval(9)
        var next = transfers[2]
        next.destinationPath = "/d/next"
        sent = store.statementCount
        try await store.saveLifecycleAndTransfers(lifecycle: [paused, transfers[3], completed], transfers: [next])
        #expect(store.statementCount - sent == 1)
        #expect(try await store.fetch(completed.downloadID) == completed)
        #expect(try await store.fetch(next.downloadID) == next)

        // Only downloads still queued become running.
        var running = Array(inserted[100..<103])
        try await store.saveLifecycle([running[1].with(state: .paused)])
        for index in running.indices { running[index].startedAt = DownloadStoreTests.date }
        sent = store.statementCount
        try await store.recordRunning(running)
        #expect(store.statementCount - sent == 1)
        var states: [DownloadState?] = []
        for record in running { states.append(try await store.fetch(record.downloadID)?.state) }
        #expect(states == [.running, .paused, .running])
        #expect(try await store.fetch(running[2].downloadID)?.startedAt == DownloadStoreTests.date)
        await server.stop()
    }

    @Test("a finishing download frees its host connection; its completion gives its lease up without a release")
    func finishingFreesTheHost() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let a = try await Self.store(url, owner: "a")
        let b = try await Self.store(url, owner: "b")
        let records = try await a.insert((1...2).map { DownloadStoreTests.queued("http://mirror/\($0)") })
        let share = HostShare(host: "mirror", wanted: 1, limit: 1)
        #expect(await a.claim(records[0].downloadID, share: share) == .granted(connections: 1))
        #expect(await b.claim(records[1].downloadID, share: share) == .hostBusy)

        // a's body has arrived (its file is being finished): the connection is free, the lease kept.
        let sent = a.statementCount
        await a.connectionsDone([records[0].downloadID])
        #expect(a.statementCount - sent == 1)
        #expect(try await b.claimHolders()[records[0].downloadID] == "a")
        #expect(
            await b.claim(records[1].downloadID, share: share) == .granted(connections: 1), "a's connection is free")

        // Recorded completed: the lease goes in that write, so the release costs no round trip.
        var finished = records[0]
        finished.destinationPath = "/d/1"
        finished.state = .completed
        finished.completedAt = DownloadStoreTests.date
        try await a.saveLifecycle([finished])
        #expect(try await b.claimHolders()[finished.downloadID] == nil)
        let released = a.statementCount
        await a.release(finished.downloadID)
        #expect(a.statementCount == released)
        // A download recorded otherwise keeps its lease until released.
        let other = try #require(try await a.insert([DownloadStoreTests.queued("http://other/1")]).first)
        #expect(
            await a.claim(other.downloadID, share: .init(host: "other", wanted: 1, limit: 1))
                == .granted(connections: 1))
        try await a.saveLifecycle([other.with(state: .failed)])
        #expect(try await b.claimHolders()[other.downloadID] == "a")
        await a.release(other.downloadID)
        #expect(try await b.claimHolders()[other.downloadID] == nil)
        await server.stop()
    }

    @Test("only other workers' writes move the change token: not a worker's own, nor a claim or release alone")
    func changesOfOthersOnly() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let a = try await Self.store(url, owner: "a")
        let b = try await Self.store(url, owner: "b")
        let ownBefore = try await a.changeToken()
        var seen = try await b.changeToken()
        let records = try await a.insert((1...3).map { DownloadStoreTests.queued("http://a/\($0)") })
        seen = try await Self.token(of: b, after: seen)

        // Leases alone notify nobody: when a's next write arrives, it is the only one b heard of. (Notifications
        // come in commit order.)
        let share = HostShare(host: "a", wanted: 1, limit: 8)
        #expect(await a.claim(records[0].downloadID, share: share) == .granted(connections: 1))
        #expect(await a.widenClaim(records[0].downloadID, share: .init(host: "a", wanted: 2, limit: 8)) == 2)
        await a.release(records[0].downloadID)
        try await a.saveLifecycle([records[1].with(state: .paused)])
        #expect(try await Self.token(of: b, after: seen) == seen + 1)

        // a's own writes (the insert, the pause) are not counted by a; b's write is.
        try await b.saveLifecycle([records[2].with(state: .failed)])
        #expect(try await Self.token(of: a, after: ownBefore) == ownBefore + 1)
        await server.stop()
    }

    @Test(
        "PostgreSQL restarts: a probe fails while it is down; after it, reads, writes and other workers' changes work")
    func serverRestarts() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let a = try await Self.store(url, owner: "a")
        let b = try await Self.store(url, owner: "b")
        let records = try await a.insert((1...2).map { DownloadStoreTests.queued("http://a/\($0)") })
        let before = try await a.changeToken()

        try await server.stopServer()
        let start = ContinuousClock.now
        await #expect(throws: DownloadError.self) { try await a.probe() }
        #expect(start.duration(to: .now) < PostgresDownloadStore.probeLimit + .seconds(10), "a probe is bounded")
        try await server.startServer()

        // Nobody probes: the listener opens again by itself, and counts a change (what was missed is read again).
        let reopened = try await Self.token(of: a, after: before, within: .seconds(30))
        #expect(reopened > before, "the listener is open again")
        // The pool connects again by itself.
        var written = false
        for _ in 0..<40 where !written {
            written = (try? await b.saveLifecycle([records[1].with(state: .paused)])) != nil
            if !written { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(written, "the other worker writes again once the server is back")
        #expect(try await Self.token(of: a, after: reopened) > reopened, "a hears b's write")
        try await a.saveLifecycle([records[0].with(state: .paused)])
        #expect(try await b.fetch(records[0].downloadID)?.state == .paused)
        try await a.probe()
        await server.stop()
    }

    @Test("a cancelled task's writes are still made: a stopped job records where it stopped")
    func writesFromACancelledTask() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let a = try await Self.store(url, owner: "a")
        let write = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            #expect(Task.isCancelled)
            // A transaction (two records), then a single statement.
            let records = try await a.insert((1...2).map { DownloadStoreTests.queued("http://a/\($0)") })
            try await a.saveLifecycle([records[0].with(state: .paused)])
            return records
        }
        let records = try await write.value
        #expect(try await a.fetchAll().map(\.state) == [.paused, .queued])
        #expect(records.map(\.id) == [1, 2])
        await server.stop()
    }

    @Test("a server that stops answering (its processes frozen, no reset): a probe still answers within its bound")
    func probeOfAFrozenServer() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let a = try await Self.store(url, owner: "a")
        // Answering before it is frozen, however loaded the machine: the probe's bound is the subject, not this.
        var answered = false
        for _ in 0..<3 where !answered { answered = (try? await a.probe()) != nil }
        try #require(answered, "the server answers a probe before it is frozen")
        let pids = try server.sql(
            "SELECT pid FROM pg_stat_activity WHERE application_name = '\(a.sessionName)'",
            database: url.lastPathComponent
        ).split(separator: "\n").compactMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
        #expect(!pids.isEmpty)
        for pid in pids { kill(pid, SIGSTOP) }
        // Thawed after 25 s whatever happens, so a probe that waits for the server ends too.
        let thaw = Task {
            try? await Task.sleep(for: .seconds(25))
            for pid in pids { kill(pid, SIGCONT) }
        }
        // Beside it, a task that only sleeps measures how late this process's tasks wake (the whole suite shares two
        // cores): the probe's answer may be late by as much, never by more.
        let lateness = Lateness()
        let start = ContinuousClock.now
        await #expect(throws: DownloadError.self) { try await a.probe() }
        let waited = start.duration(to: .now)
        let late = await lateness.stop()
        #expect(
            waited < PostgresDownloadStore.probeLimit + .seconds(5) + late,
            "a probe is bounded: it answered after \(waited), tasks woke \(late) late")
        thaw.cancel()
        for pid in pids { kill(pid, SIGCONT) }
        await server.stop()
    }

    @Test("a write whose task is cancelled while it waits for one of the pool's connections is still made")
    func writeCancelledWhileWaitingForAConnection() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let a = try await Self.store(url, owner: "a")
        let records = try await a.insert([DownloadStoreTests.queued("http://a/1")])
        // Every connection of the pool busy for 1.5 s.
        let busy = (0..<PostgresDownloadStore.maximumConnections).map { _ in
            Task { try await a.run("SELECT pg_sleep(1.5)", inOrder: false) }
        }
        try await Task.sleep(for: .milliseconds(500))
        let write = Task { try await a.saveLifecycle([records[0].with(state: .paused)]) }
        try await Task.sleep(for: .milliseconds(200))
        write.cancel()
        try await write.value
        for task in busy { _ = try await task.value }
        #expect(try await a.fetch(records[0].downloadID)?.state == .paused)
        await server.stop()
    }

    /// `store`'s change token once it differs from `token` (at most `limit`: it returns as soon as it does, and the
    /// suite's load can hold a notification back for seconds).
    static func token(
        of store: PostgresDownloadStore, after token: Int, within limit: Duration = .seconds(30)
    ) async throws -> Int {
        let start = ContinuousClock.now
        while try await store.changeToken() == token, start.duration(to: .now) < limit {
            try await Task.sleep(for: .milliseconds(10))
        }
        return try await store.changeToken()
    }

    @Test("claims made together: one round trip, in order, each counting the connections the ones before it took")
    func claimsTogether() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let a = try await Self.store(url, owner: "a")
        let b = try await Self.store(url, owner: "b")
        let ids = try await a.insert((1...6).map { DownloadStoreTests.queued("http://mirror/\($0)") }).map(\.downloadID)
        let mirror = HostShare(host: "mirror", wanted: 1, limit: 3)
        #expect(await b.claim(ids[5], share: mirror) == .granted(connections: 1))
        // a holds ids[4] with both of its host's connections: claimed again, it keeps them (its own are not counted
        // against it).
        let again = HostShare(host: "again", wanted: 2, limit: 2)
        #expect(await a.claim(ids[4], share: again) == .granted(connections: 2))
        let sent = a.statementCount
        let outcomes = await a.claim(
            [
                (ids[0], mirror), (ids[5], mirror), (ids[1], HostShare(host: "mirror", wanted: 2, limit: 3)),
                (ids[2], mirror), (ids[3], HostShare(host: "other", wanted: 1, limit: 3)),
                (ids[4], HostShare(host: "again", wanted: 1, limit: 2)),
            ], viewToken: nil)
        #expect(a.statementCount - sent == 1)
        #expect(
            outcomes == [
                .granted(connections: 1), .refused, .granted(connections: 1), .hostBusy, .granted(connections: 1),
                .granted(connections: 2),
            ])
        #expect(try await a.claimHolders() == [ids[0]: "a", ids[1]: "a", ids[3]: "a", ids[4]: "a", ids[5]: "b"])
        #expect(await b.claim(ids[2], share: .init(host: "again", wanted: 1, limit: 2)) == .hostBusy)
        // Held as any claim: released one by one.
        await a.release(ids[0])
        #expect(await b.claim(ids[2], share: mirror) == .granted(connections: 1))
        await server.stop()
    }

    @Test("a write rolled back for a conflict (deadlock, serialization) is tried again, a bounded number of times")
    func conflictsRetried() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let store = try await Self.store(url, owner: "a")
        let records = try await store.insert((1...2).map { DownloadStoreTests.queued("http://a/\($0)") })
        // Each update fails for a conflict while a sequence (which no rollback undoes) is at most `fails`.
        try server.sql(
            """
            CREATE SEQUENCE attempts; CREATE TABLE fails (n BIGINT); INSERT INTO fails VALUES (2);
            CREATE FUNCTION conflict() RETURNS trigger AS $$ BEGIN
                IF nextval('attempts') <= (SELECT n FROM fails) THEN
                    RAISE EXCEPTION 'could not serialize access' USING ERRCODE = 'serialization_failure';
                END IF;
                RETURN NULL;
            END; $$ LANGUAGE plpgsql;
            CREATE TRIGGER conflict BEFORE UPDATE ON haul_download FOR EACH STATEMENT EXECUTE FUNCTION conflict();
            """, database: url.lastPathComponent)
        var sent = store.statementCount
        try await store.saveLifecycle([records[0].with(state: .paused)])
        #expect(store.statementCount - sent == 3, "two conflicts, then done")
        #expect(try await store.fetch(records[0].downloadID)?.state == .paused)
        // A transaction (one record in both of its statements) is tried again whole: BEGIN, the first UPDATE
        // (refused), ROLLBACK, then BEGIN, both UPDATEs, COMMIT.
        try server.sql("SELECT setval('attempts', 1, false); UPDATE fails SET n = 1", database: url.lastPathComponent)
        sent = store.statementCount
        var moved = records[1]
        moved.destinationPath = "/d/2"
        try await store.saveLifecycleAndTransfers(lifecycle: [moved.with(state: .failed)], transfers: [moved])
        #expect(store.statementCount - sent == 7)
        #expect(try await store.fetch(moved.downloadID) == moved.with(state: .failed))
        // Conflicts that go on fail the write after four attempts, with the database's message.
        try server.sql("SELECT setval('attempts', 1, false); UPDATE fails SET n = 100", database: url.lastPathComponent)
        sent = store.statementCount
        await #expect(throws: DownloadError.self) { try await store.saveLifecycle([records[0].with(state: .queued)]) }
        #expect(store.statementCount - sent == PostgresDownloadStore.conflictAttempts)
        #expect(try await store.fetch(records[0].downloadID)?.state == .paused)
        // Another failure is not tried again.
        try server.sql(
            """
            CREATE OR REPLACE FUNCTION conflict() RETURNS trigger AS $$ BEGIN
                RAISE EXCEPTION 'disk full' USING ERRCODE = 'disk_full';
            END; $$ LANGUAGE plpgsql;
            """, database: url.lastPathComponent)
        sent = store.statementCount
        await #expect(throws: DownloadError.self) { try await store.saveLifecycle([records[0].with(state: .queued)]) }
        #expect(store.statementCount - sent == 1)
        await server.stop()
    }

    @Test("a change by any worker reaches the others as a notification")
    func notifications() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let a = try await Self.store(url, owner: "a")
        let b = try await Self.store(url, owner: "b")
        let before = try await b.changeToken()
        // How late this process's tasks wake meanwhile: the notification may be heard as much later, never more.
        let lateness = Lateness()
        _ = try await a.insert([DownloadStoreTests.queued("http://a/1")])
        let start = ContinuousClock.now
        while try await b.changeToken() == before, start.duration(to: .now) < .seconds(30) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let heard = start.duration(to: .now)
        let late = await lateness.stop()
        #expect(try await b.changeToken() != before, "b heard of a's insert")
        #expect(heard < .seconds(1) + late, "heard after \(heard), tasks woke \(late) late")
        await server.stop()
    }
}

extension DownloadRecord {
    /// This record in `state`.
    func with(state: DownloadState) -> DownloadRecord {
        var record = self
        record.state = state
        return record
    }
}
