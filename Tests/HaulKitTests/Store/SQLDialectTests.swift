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
        #expect(DownloadColumn.placeholders(2) == "(?, ?)")
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
