import Foundation
import Testing

@testable import HaulKit

/// ``SQLDialect`` and the statement parts both stores build from ``DownloadColumn``.
@Suite("The stores' shared SQL")
struct SQLDialectTests {
    @Test("parameters: ? for SQLite, numbered from the given one for PostgreSQL; none for a count of 0")
    func parameters() {
        #expect(SQLDialect.sqlite.parameters(3) == "?, ?, ?")
        #expect(SQLDialect.sqlite.parameters(2, from: 5) == "?, ?")
        #expect(SQLDialect.postgres.parameters(3) == "$1, $2, $3")
        #expect(SQLDialect.postgres.parameters(2, from: 4) == "$4, $5")
        #expect(SQLDialect.sqlite.parameters(0).isEmpty && SQLDialect.postgres.parameters(0, from: 2).isEmpty)
        #expect(SQLDialect.sqlite.rows([.id, .url], count: 1) == "(?, ?)")
    }

    @Test("rows of parameters: SQLite's bare, PostgreSQL's numbered on from the given one and typed by their column")
    func rows() {
        #expect(SQLDialect.sqlite.rows([.id, .url, .createdAt], count: 2, from: 4) == "(?, ?, ?), (?, ?, ?)")
        #expect(
            SQLDialect.postgres.rows([.id, .url, .createdAt, .errorTransient], count: 2, from: 3)
                == "($3::BIGINT, $4::TEXT, $5::TIMESTAMPTZ, $6::BOOLEAN), "
                + "($7::BIGINT, $8::TEXT, $9::TIMESTAMPTZ, $10::BOOLEAN)")
        #expect(SQLDialect.sqlite.rows([.id], count: 0).isEmpty)
        #expect(SQLDialect.sqlite.type(of: .createdAt) == "DATETIME" && SQLDialect.postgres.type(of: .state) == "TEXT")
    }

    @Test("a batched update: the same statement in both dialects but for the parameters; the values by position")
    func batchedUpdate() {
        let sqlite = BatchedWriteSQL.update("download", [.state, .updatedAt], rows: 2, dialect: .sqlite)
        #expect(
            sqlite == "UPDATE download AS d SET state = v.column2, updatedAt = v.column3 "
                + "FROM (VALUES (?, ?, ?), (?, ?, ?)) AS v WHERE d.id = v.column1")
        let postgres = BatchedWriteSQL.update(
            "haul_download", [.state], rows: 1, dialect: .postgres, from: 2, assignments: ["leaseOwner = NULL"],
            conditions: ["d.leaseOwner = $1::TEXT"])
        #expect(
            postgres == "UPDATE haul_download AS d SET state = v.column2, leaseOwner = NULL "
                + "FROM (VALUES ($2::BIGINT, $3::TEXT)) AS v WHERE d.id = v.column1 AND d.leaseOwner = $1::TEXT")
        #expect(BatchedWriteSQL.value(of: .updatedAt, among: [.state, .updatedAt]) == "v.column3")
        #expect(
            BatchedWriteSQL.insert(into: "t", [.id, .url], rows: 2, dialect: .postgres)
                == "INSERT INTO t (id, url) VALUES ($1::BIGINT, $2::TEXT), ($3::BIGINT, $4::TEXT)")
    }

    @Test("the last record of each id is kept, in order; records without a repeated id come back as they are")
    func lastOfEachID() {
        func record(_ id: Int64, _ url: String) -> DownloadRecord {
            DownloadRecord(
                id: id, url: url, options: DownloadOptions(), state: .queued, createdAt: Date(), updatedAt: Date())
        }
        let records = [record(1, "a"), record(2, "b"), record(1, "c"), record(3, "d"), record(2, "e")]
        #expect(BatchedWriteSQL.lastOfEachID(records).map(\.url) == ["c", "d", "e"])
        #expect(BatchedWriteSQL.lastOfEachID(Array(records.prefix(2))).map(\.id) == [1, 2])
        #expect(BatchedWriteSQL.lastOfEachID([]).isEmpty)
    }

    @Test(
        "ids in order, in chunks of the dialect's size: none for no ids, a last short chunk",
        arguments: [
            (SQLDialect.sqlite, 0, [Int]()), (.sqlite, 500, [500]), (.sqlite, 1_001, [500, 500, 1]),
            (.postgres, 1_000, [1_000]), (.postgres, 1_001, [1_000, 1]),
        ])
    func idChunks(dialect: SQLDialect, count: Int, sizes: [Int]) {
        let ids = (0..<count).map { DownloadID(rawValue: Int64(1_000 + 7 * $0)) }
        let chunks = dialect.idChunks(ids)
        #expect(chunks.map(\.count) == sizes)
        #expect(chunks.flatMap { $0 } == ids.map(\.rawValue))
    }

    @Test("the select names every column of DownloadColumn, in order, and the table it is given")
    func select() {
        let names = DownloadColumn.allCases.map(\.rawValue).joined(separator: ", ")
        #expect(DownloadColumn.selectAll(from: "haul_download") == "SELECT \(names) FROM haul_download")
        #expect(DownloadColumn.select == "SELECT \(names) FROM download")
    }

    @Test("the schema check: the expected columns pass; others are named beside the expected ones")
    func mismatch() {
        #expect(DownloadColumn.mismatch(table: "t", found: ["id INTEGER"], expected: ["id INTEGER"]) == nil)
        let reason = DownloadColumn.mismatch(
            table: "t", found: ["id INTEGER", "url TEXT"], expected: ["id INTEGER", "url TEXT", "state TEXT"])
        #expect(
            reason == "its t table has the columns [id INTEGER, url TEXT], not the expected "
                + "[id INTEGER, url TEXT, state TEXT]")
        #expect(
            DownloadColumn.mismatch(table: "t", found: ["b TEXT", "a TEXT"], expected: ["a TEXT", "b TEXT"]) != nil)
    }
}
