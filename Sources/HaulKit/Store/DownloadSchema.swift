import GRDB

/// The SQLite schema of the state database: its migrations, and the check that they produce exactly the table
/// ``DownloadColumn`` defines (names, order and types), so code and database can never disagree silently.
enum DownloadSchema {
    /// Shipped migrations are never edited; changes come as new migrations (and a case in ``DownloadColumn``).
    static var migrator: DatabaseMigrator {
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
        migrator.registerMigration("v4: no indexes that no query uses") { db in
            // Every lookup by state, URL or destination is answered from memory; these only made each write
            // (several per small download) rewrite more pages.
            try db.drop(index: "download_on_state")
            try db.drop(index: "download_on_url")
            try db.drop(index: "download_on_destinationPath")
        }
        migrator.registerMigration("v5: owners and fingerprints") { db in
            try db.alter(table: "download") { t in
                t.add(column: "owner", .text)
                t.add(column: "fileSize", .integer)
                t.add(column: "fileModified", .integer)
                t.add(column: "fileIdentity", .text)
                t.add(column: "sha256", .text)
            }
        }
        migrator.registerMigration("v6: the queue read without the history") { db in
            // A manager reads the unfinished downloads at start, and a finished one only when it is asked for (by
            // id, or by URL when it is added again): 100,000 completed downloads cost a command nothing.
            try db.execute(sql: "CREATE INDEX download_unfinished ON download (id) WHERE state <> 'completed'")
            try db.create(index: "download_on_url", on: "download", columns: ["url"])
        }
        migrator.registerMigration("v7: what a completed file was verified against") { db in
            try db.alter(table: "download") { t in t.add(column: "verification", .text) }
        }
        migrator.registerMigration("v8: the event outbox") { db in
            // Rows are written by a trigger only a process with hooks or webhooks creates (``SQLiteEventOutbox``),
            // and deleted once delivered: an empty table otherwise.
            try db.execute(sql: SQLiteEventOutbox.tableDefinition)
        }
        return migrator
    }

    /// Runs the migrations not yet applied to `database`, safely beside other processes opening it at once.
    ///
    /// GRDB reads which migrations are applied, then runs each of the others in a transaction of its own: two
    /// processes opening a new (or older) database together both run the same one, and the second fails in it
    /// ("duplicate column name"), its transaction rolled back. Such a failure is one the other process's progress
    /// explains: the applied set moved meanwhile. Then the rest is run again from there, at most once per migration
    /// (each retry follows a migration applied elsewhere). A failure with nothing applied meanwhile is thrown.
    static func migrate(_ database: DatabasePool) throws {
        let migrator = migrator
        var retries = 0
        while true {
            let before = try database.read { try migrator.appliedIdentifiers($0) }
            do {
                return try migrator.migrate(database)
            } catch {
                retries += 1
                guard retries <= migrator.migrations.count,
                    try database.read({ try migrator.appliedIdentifiers($0) }) != before
                else { throw error }
            }
        }
    }

    /// Nil when the `download` table has the columns of ``DownloadColumn``, in order, with their types; otherwise
    /// what differs.
    static func mismatch(_ db: Database) throws -> String? {
        let found = try Row.fetchAll(db, sql: "PRAGMA table_info(download)").map { row -> String in
            let name: String = row["name"]
            let type: String = row["type"]
            return "\(name) \(type)"
        }
        let expected = DownloadColumn.allCases.map { "\($0.rawValue) \($0.sqlType)" }
        return DownloadColumn.mismatch(table: "download", found: found, expected: expected)
    }
}
