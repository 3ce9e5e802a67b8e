import Foundation
import GRDB

extension HaulVersion {
    /// The schema version of the state database this version of Haul writes: how many migrations it knows.
    public static var schemaVersion: Int { DownloadSchema.migrator.migrations.count }

    /// The schema version of the state database at `url`, for bug reports: how many migrations it has had, read
    /// without changing the file (a database a newer Haul wrote counts the migrations this one does not know too);
    /// nil when there is no file there.
    public static func schemaVersion(ofDatabaseAt url: URL) throws(DownloadError) -> Int? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        // A `haul run` closing the file at that moment checkpoints and removes its WAL under an exclusive lock.
        configuration.busyMode = .timeout(10)
        do {
            let database = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? database.close() }
            return try database.read { db in
                guard try db.tableExists("grdb_migrations") else { return 0 }
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") ?? 0
            }
        } catch {
            throw StateDatabaseFailure.error(error, path: url.path, doing: "cannot read its schema version")
        }
    }
}
