import Foundation
import HaulKit
import PostgresNIO

/// The records read back, each decoded from its row (a damaged one is marked, not dropped).
extension PostgresDownloadStore {
    static let select = DownloadColumn.selectAll(from: table)

    nonisolated(nonsending) func records(
        _ sql: String, _ binds: [StoredValue] = []
    ) async throws(DownloadError) -> [DownloadRecord] {
        var decoder = DownloadRecordDecoder()
        return try await run(sql, binds).rows.map {
            decoder.decodeOrMarkDamaged(PostgresStoredRow($0.makeRandomAccess()))
        }
    }

    nonisolated(nonsending) func fetchAll() async throws(DownloadError) -> [DownloadRecord] {
        try await records(Self.select + " ORDER BY id")
    }

    /// One scan of the table per chunk of bases (it has no index on `url`), each record's URL up to its query
    /// compared with the chunk's bases (`split_part`: byte for byte, whatever the database's collation).
    nonisolated(nonsending) func fetchRecords(urlBases bases: [String]) async throws(DownloadError) -> [DownloadRecord]
    {
        var found: [DownloadRecord] = []
        for part in SQLDialect.postgres.chunks(Array(Set(bases))) {
            let chunk = part.map(StoredValue.text)
            found += try await records(
                Self.select + " WHERE split_part(url, '?', 1) IN (\(SQLDialect.postgres.parameters(chunk.count)))",
                chunk)
        }
        return found.sorted { $0.downloadID < $1.downloadID }
    }

    nonisolated(nonsending) func fetch(_ id: DownloadID) async throws(DownloadError) -> DownloadRecord? {
        try await records(Self.select + " WHERE id = $1", [.integer(id.rawValue)]).first
    }

    /// One statement per chunk of ids (not one per id): an idle worker reads every download it follows this way.
    nonisolated(nonsending) func fetch(_ ids: [DownloadID]) async throws(DownloadError) -> [DownloadRecord] {
        var found: [DownloadRecord] = []
        for chunk in Self.idChunks(Array(Set(ids))) {
            found += try await records(
                Self.select + " WHERE id IN (\(SQLDialect.postgres.parameters(chunk.count)))", chunk)
        }
        return found.sorted { $0.downloadID < $1.downloadID }
    }

    nonisolated(nonsending) func forEachUnfinishedRecord(
        _ body: (DownloadRecord) -> Void
    ) async throws(DownloadError) {
        for record in try await records(Self.select + " WHERE \(DownloadColumn.unfinished) ORDER BY id") {
            body(record)
        }
    }

    nonisolated(nonsending) func unfinishedCount() async throws(DownloadError) -> Int {
        let row = try await run("SELECT count(*) FROM \(Self.table) WHERE \(DownloadColumn.unfinished)").rows.first
        return Int((try? row?.makeRandomAccess()[0].decode(Int64.self)) ?? 0)
    }

    nonisolated(nonsending) func completedIDs() async throws(DownloadError) -> [DownloadID] {
        try await run("SELECT id FROM \(Self.table) WHERE \(DownloadColumn.completed) ORDER BY id").rows.compactMap {
            row in
            (try? row.makeRandomAccess()[0].decode(Int64.self)).map(DownloadID.init(rawValue:))
        }
    }

    nonisolated(nonsending) func fetchUpdated(since date: Date) async throws(DownloadError) -> [DownloadRecord] {
        try await records(Self.select + " WHERE updatedAt >= $1 ORDER BY id", [.date(date)])
    }

    nonisolated(nonsending) func fetchIDs() async throws(DownloadError) -> Set<DownloadID> {
        Set(
            try await run("SELECT id FROM \(Self.table)").rows.compactMap { row in
                (try? row.makeRandomAccess()[0].decode(Int64.self)).map(DownloadID.init(rawValue:))
            })
    }

    nonisolated(nonsending) func count() async throws(DownloadError) -> Int {
        let row = try await run("SELECT count(*) FROM \(Self.table)").rows.first
        return Int((try? row?.makeRandomAccess()[0].decode(Int64.self)) ?? 0)
    }

    nonisolated(nonsending) func changeToken() async throws(DownloadError) -> Int { changes.load(ordering: .relaxed) }
}

/// A PostgreSQL row read by position, for ``DownloadRecordDecoder``.
private struct PostgresStoredRow: StoredRow {
    let row: PostgresRandomAccessRow

    init(_ row: PostgresRandomAccessRow) { self.row = row }

    func integer(at index: Int) throws -> Int64? { try row[index].decode(Int64?.self) }
    func text(at index: Int) throws -> String? { try row[index].decode(String?.self) }
    func boolean(at index: Int) throws -> Bool? { try row[index].decode(Bool?.self) }
    func date(at index: Int) throws -> Date? { try row[index].decode(Date?.self) }
}
