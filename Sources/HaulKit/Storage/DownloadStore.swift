import Foundation
import GRDB

/// The state database: one SQLite file in WAL mode, shared safely by several processes (`haul list` while
/// `haul run` works). Each call is one transaction.
final class DownloadStore: Sendable {
    let path: String
    private let database: DatabasePool

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    init(path: String) throws(DownloadError) {
        self.path = path
        do {
            try FileSystem.createDirectory(FileSystem.parent(of: path))
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            configuration.label = "haul"
            configuration.prepareDatabase { db in
                // Durable against process death at every commit; against power loss, a commit can roll back, which
                // only ever makes a record claim fewer bytes.
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
            database = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(database)
        } catch let error as DownloadError {
            throw error
        } catch {
            throw .stateDatabase(path: path, reason: "\(error)")
        }
    }

    /// Shipped migrations are never edited; changes come as new migrations.
    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: downloads") { db in
            try db.create(table: "download") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("url", .text).notNull()
                t.column("requestedDestination", .jsonText)
                t.column("destinationPath", .text)
                t.column("options", .jsonText).notNull()
                t.column("state", .text).notNull().indexed()
                t.column("createdAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
                t.column("startedAt", .datetime)
                t.column("completedAt", .datetime)
                t.column("errorCode", .integer)
                t.column("errorSummary", .text)
                t.column("errorSuggestion", .text)
                t.column("errorTransient", .boolean)
                t.column("errorHTTPStatus", .integer)
                t.column("hasPartData", .boolean).notNull().defaults(to: false)
                t.column("generation", .integer).notNull().defaults(to: 0)
                t.column("durableBytes", .integer).notNull().defaults(to: 0)
                t.column("bootID", .text)
                t.column("etag", .text)
                t.column("lastModified", .text)
                t.column("totalBytes", .integer)
                t.column("contentEncoding", .text)
                t.column("finalURL", .text)
                t.column("finalizing", .boolean).notNull().defaults(to: false)
            }
            try db.create(index: "download_on_url", on: "download", columns: ["url"])
            try db.create(index: "download_on_destinationPath", on: "download", columns: ["destinationPath"])
        }
        migrator.registerMigration("v2: segments") { db in
            try db.alter(table: "download") { t in t.add(column: "segments", .jsonText) }
        }
        migrator.registerMigration("v3: changes by other processes") { db in
            try db.create(index: "download_on_updatedAt", on: "download", columns: ["updatedAt"])
        }
        return migrator
    }

    private func write<T: Sendable>(_ body: (Database) throws -> T) throws(DownloadError) -> T {
        do {
            return try database.write(body)
        } catch {
            throw .stateDatabase(path: path, reason: "\(error)")
        }
    }

    private func read<T: Sendable>(_ body: (Database) throws -> T) throws(DownloadError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw .stateDatabase(path: path, reason: "\(error)")
        }
    }

    func fetchAll() throws(DownloadError) -> [DownloadRecord] {
        try read { db in try DownloadRecordDecoder.fetchAll(db, sql: DownloadRecordDecoder.select + " ORDER BY id") }
    }

    /// Records changed at or after `date` (by any process).
    func fetchUpdated(since date: Date) throws(DownloadError) -> [DownloadRecord] {
        try read { db in
            try DownloadRecordDecoder.fetchAll(
                db, sql: DownloadRecordDecoder.select + " WHERE updatedAt >= ? ORDER BY id", arguments: [date])
        }
    }

    /// The identifiers of all records.
    func fetchIDs() throws(DownloadError) -> Set<DownloadID> {
        try read { db in Set(try Int64.fetchAll(db, sql: "SELECT id FROM download").map(DownloadID.init(rawValue:))) }
    }

    func count() throws(DownloadError) -> Int {
        try read { db in try DownloadRecord.fetchCount(db) }
    }

    /// A number that changes whenever another connection (another process, say) commits a change.
    func dataVersion() throws(DownloadError) -> Int {
        do {
            return try database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
        } catch {
            throw .stateDatabase(path: path, reason: "\(error)")
        }
    }

    func fetch(_ id: DownloadID) throws(DownloadError) -> DownloadRecord? {
        try read { db in
            try DownloadRecordDecoder.fetchAll(db, sql: DownloadRecordDecoder.select + " WHERE id = ?", arguments: [id.rawValue])
                .first
        }
    }

    /// Inserts new records in one transaction and returns them with their identifiers.
    func insert(_ records: [DownloadRecord]) throws(DownloadError) -> [DownloadRecord] {
        try write { db in
            try records.map { record in
                var record = record
                try record.insert(db)
                return record
            }
        }
    }

    /// Writes the manager's columns of `record`.
    func saveLifecycle(_ record: DownloadRecord) throws(DownloadError) {
        try saveLifecycle([record])
    }

    /// Writes the manager's columns of several records in one transaction (100,000 in about a second).
    func saveLifecycle(_ records: [DownloadRecord]) throws(DownloadError) {
        guard !records.isEmpty else { return }
        let columns = DownloadRecord.ManagerColumns.all
        let sql = "UPDATE download SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"
        let encoder = DownloadRecord.databaseJSONEncoder(for: "options")
        var encodedOptions: [DownloadOptions: String] = [:]
        try write { db in
            let statement = try db.cachedStatement(sql: sql)
            for record in records {
                let options: String
                if let known = encodedOptions[record.options] {
                    options = known
                } else {
                    options = String(decoding: try encoder.encode(record.options), as: UTF8.self)
                    encodedOptions[record.options] = options
                }
                // In the order of `ManagerColumns.all`.
                try statement.execute(arguments: [
                    record.state.rawValue, record.updatedAt, record.startedAt, record.completedAt, record.errorCode,
                    record.errorSummary, record.errorSuggestion, record.errorTransient, record.errorHTTPStatus,
                    options, record.id,
                ])
            }
        }
    }

    /// Writes the destination chosen for `record`.
    func saveDestination(_ record: DownloadRecord) throws(DownloadError) {
        try write { db in try record.update(db, columns: ["destinationPath", "updatedAt"]) }
    }

    /// Writes the job's transfer columns of `record`.
    func saveTransfer(_ record: DownloadRecord) throws(DownloadError) {
        try write { db in try record.update(db, columns: DownloadRecord.JobColumns.all) }
    }

    /// Records that `durableBytes` are synced, unless the part file was cut back since (another generation).
    @discardableResult
    /// With `segments`, also records the plan of a multi-connection download (each segment's synced bytes).
    func checkpoint(
        _ id: DownloadID, generation: Int64, durableBytes: Int64, segments: [Segment]? = nil, bootID: String?
    ) throws(DownloadError) -> Bool {
        let plan: String?
        do {
            plan = try segments.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        } catch {
            throw .internalError("cannot encode a segment plan: \(error)")
        }
        return try write { db in
            var assignments = [
                Column("durableBytes").set(to: durableBytes), Column("bootID").set(to: bootID),
                Column("updatedAt").set(to: Date()),
            ]
            if let plan { assignments.append(Column("segments").set(to: plan)) }
            return try DownloadRecord
                .filter(Column("id") == id.rawValue && Column("generation") == generation)
                .updateAll(db, assignments) > 0
        }
    }

    /// Deletes records in one transaction.
    func delete(_ ids: [DownloadID]) throws(DownloadError) {
        guard !ids.isEmpty else { return }
        try write { db in
            // Chunks stay under SQLite's limit on bound parameters.
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(ids.count, start + 500)].map(\.rawValue)
                _ = try DownloadRecord.deleteAll(db, keys: chunk)
            }
        }
    }
}
