import Foundation
import GRDB
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Schema")
struct DownloadSchemaTests {
    /// A state database made by the store, and a second connection to it.
    static func migrated(in directory: TemporaryDirectory) throws -> (path: String, database: DatabaseQueue) {
        let path = directory.file("haul.sqlite").path
        _ = try SQLiteDownloadStore(path: path)
        return (path, try inspector(of: path))
    }

    /// A connection of the test's own to the database at `path`, which waits (as Haul's do) while the last of the
    /// store's connections closes: that one checkpoints and removes the WAL under an exclusive lock, and a
    /// connection that does not wait is refused then ("database is locked", seen once on CI).
    static func inspector(of path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    @Test("the migrations build exactly the table DownloadColumn defines: names, order and types")
    func migrationsMatchTheColumns() throws {
        let directory = TemporaryDirectory()
        let (_, database) = try Self.migrated(in: directory)
        #expect(try database.read(DownloadSchema.mismatch) == nil)
        let columns = try database.read { db in
            try Row.fetchAll(db, sql: "PRAGMA table_info(download)").map { row -> String in
                let name: String = row["name"]
                return name
            }
        }
        #expect(columns == DownloadColumn.allCases.map(\.rawValue))
        #expect(DownloadColumn.select.hasPrefix("SELECT id, url, requestedDestination,"))
    }

    @Test("every column has one writer, and each update names only its writer's columns")
    func owners() {
        #expect(DownloadColumn.lifecycle.allSatisfy { $0.owner == .lifecycle || $0 == .updatedAt })
        #expect(DownloadColumn.job.allSatisfy { $0.owner == .job || $0 == .updatedAt })
        #expect(DownloadColumn.settings == [.url, .options, .updatedAt])
        let written = Set(DownloadColumn.lifecycle + DownloadColumn.job + DownloadColumn.settings)
        let identity = Set(DownloadColumn.allCases.filter { $0.owner == .identity })
        #expect(written.union(identity) == Set(DownloadColumn.allCases))
        #expect(Set(DownloadColumn.lifecycle).intersection(DownloadColumn.job) == [.updatedAt])
    }

    @Test("a database whose table differs from the definition is refused with the columns it has")
    func refusesAnotherShape() throws {
        let directory = TemporaryDirectory()
        let (path, database) = try Self.migrated(in: directory)
        // The last column of the definition is missing: the table found ends one column earlier.
        let columns = DownloadColumn.allCases
        let (last, before) = (columns[columns.count - 1], columns[columns.count - 2])
        try database.write { db in try db.execute(sql: "ALTER TABLE download DROP COLUMN \(last.rawValue)") }
        try database.close()
        #expect {
            _ = try SQLiteDownloadStore(path: path)
        } throws: { error in
            guard let error = error as? DownloadError, error.code == .stateDatabase else { return false }
            return error.summary.contains("\(before.rawValue) \(before.sqlType)]")
                && error.summary.contains("\(last.rawValue) \(last.sqlType)]")
        }
    }

    /// GRDB reads which migrations are applied, then runs each of the others in a transaction of its own: two
    /// processes that open a new state database at once (`haul get` and a `haul list` beside it) both ran the first
    /// ones, and the second failed ("duplicate column name", exit 4). Four openers on threads of their own, twenty times
    /// (before the fix, 1 to 3 of ten rounds failed: in a migration, or in the switch to WAL).
    @Test("several openers of a new state database at once all open it, and its schema is built once")
    func concurrentFirstOpens() async throws {
        for _ in 0..<20 {
            let directory = TemporaryDirectory()
            let path = directory.file("haul.sqlite").path
            let opened = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        do {
                            _ = try await blocking { try SQLiteDownloadStore(path: path) }
                            return nil
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
            }
            #expect(opened.isEmpty, "\(opened)")
            let database = try Self.inspector(of: path)
            #expect(try await database.read(DownloadSchema.mismatch) == nil)
            #expect(try await database.read { try DownloadSchema.migrator.hasCompletedMigrations($0) })
        }
    }
}
