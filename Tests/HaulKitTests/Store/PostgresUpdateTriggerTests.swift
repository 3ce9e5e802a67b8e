import Foundation
import HaulTestSupport
import Testing

@testable import HaulFleet
@testable import HaulKit

/// The fleet's update trigger (`haul_download_updated`) is derived from ``DownloadColumn``: every open recreates it
/// when it does not name every column but the id, so a column a migration added without the trigger still notifies.
@Suite(
    "PostgreSQL update trigger",
    .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"))
struct PostgresUpdateTriggerTests {
    /// The columns the trigger names, as the server's catalogue lists them (lower case), sorted.
    static func triggerColumns(_ server: PostgresServer, _ url: URL) throws -> [String] {
        try server.sql(
            """
            SELECT event_object_column FROM information_schema.triggered_update_columns
            WHERE trigger_name = 'haul_download_updated'
            """, database: url.lastPathComponent
        ).split(separator: "\n").map(String.init).sorted()
    }

    /// Every column of ``DownloadColumn`` but the id, in lower case, sorted.
    static let expected = DownloadColumn.allCases.filter { $0 != .id }.map { $0.rawValue.lowercased() }.sorted()

    @Test("an opened store's update trigger names every column of DownloadColumn but the id")
    func namesEveryColumn() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        _ = try await PostgresStoreTests.store(url, owner: "a")
        #expect(try Self.triggerColumns(server, url) == Self.expected)
        #expect(Self.expected.contains("verification"))
        await server.stop()
    }

    @Test("a column added without its trigger: the next open recreates the trigger, and that column's update notifies")
    func columnAddedWithoutItsTrigger() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let database = url.lastPathComponent
        let first = try await PostgresStoreTests.store(url, owner: "a")
        let id = try #require(try await first.insert([DownloadStoreTests.queued("http://a/1")]).first?.id)

        // What a migration that added `verification` but did not recreate the trigger would leave.
        let without = DownloadColumn.allCases.filter { $0 != .id && $0 != .verification }.map(\.rawValue)
        try server.sql(
            """
            DROP TRIGGER haul_download_updated ON haul_download;
            CREATE TRIGGER haul_download_updated AFTER UPDATE OF \(without.joined(separator: ", "))
                ON haul_download FOR EACH STATEMENT EXECUTE FUNCTION haul_download_notify();
            """, database: database)
        #expect(try !Self.triggerColumns(server, url).contains("verification"))
        // Broken indeed: an update of `verification` alone notifies nobody. (Notifications come in commit order: when
        // the next update's arrives, it is the only one heard.)
        let unrepaired = try await first.changeToken()
        try server.sql("UPDATE haul_download SET verification = 'sha256:0' WHERE id = \(id)", database: database)
        try server.sql("UPDATE haul_download SET state = 'paused' WHERE id = \(id)", database: database)
        #expect(try await PostgresStoreTests.token(of: first, after: unrepaired) == unrepaired + 1)

        // The next worker to open the database recreates the trigger; another worker's update of `verification`
        // alone now reaches it (and every other worker).
        let second = try await PostgresStoreTests.store(url, owner: "b")
        #expect(try Self.triggerColumns(server, url) == Self.expected)
        let before = try await second.changeToken()
        let firstBefore = try await first.changeToken()
        try server.sql("UPDATE haul_download SET verification = 'sha256:1' WHERE id = \(id)", database: database)
        #expect(try await PostgresStoreTests.token(of: second, after: before) == before + 1)
        #expect(try await PostgresStoreTests.token(of: first, after: firstBefore) == firstBefore + 1)
        await server.stop()
    }

    @Test("the trigger's SQL names the columns it is given: a copy of the definition with one more column")
    func generatedFromTheColumns() async throws {
        let columns = PostgresDownloadStore.notifiedColumns + ["surprise"]
        let sql = PostgresDownloadStore.updateTrigger(on: columns)
        let named = try #require(sql.firstMatch(of: /UPDATE OF ([^\n]+)\n/)?.output.1)
        #expect(named.split(separator: ", ").map(String.init) == columns)

        // Applied to a table that has the column, by the same repair an open runs: that column's update notifies.
        let server = try await PostgresServer.start()
        let url = try await server.makeDatabase()
        let store = try await PostgresStoreTests.store(url, owner: "a")
        let id = try #require(try await store.insert([DownloadStoreTests.queued("http://a/1")]).first?.id)
        try server.sql("ALTER TABLE haul_download ADD COLUMN surprise TEXT", database: url.lastPathComponent)
        let repaired = try await store.transaction { send throws(DownloadError) in
            try await store.repairUpdateTrigger(on: columns, send)
        }
        #expect(repaired)
        #expect(try Self.triggerColumns(server, url) == (Self.expected + ["surprise"]).sorted())
        let again = try await store.transaction { send throws(DownloadError) in
            try await store.repairUpdateTrigger(on: columns, send)
        }
        #expect(!again, "a trigger that names the columns is left alone")
        let before = try await store.changeToken()
        try server.sql("UPDATE haul_download SET surprise = 'x' WHERE id = \(id)", database: url.lastPathComponent)
        #expect(try await PostgresStoreTests.token(of: store, after: before) == before + 1)
        await server.stop()
    }
}
