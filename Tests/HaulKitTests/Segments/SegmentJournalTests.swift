import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Segment journal")
struct SegmentJournalTests {
    static let plan = [
        Segment(id: 0, start: 0, end: 1_000, written: 10), Segment(id: 1, start: 1_000, end: 2_000, written: 0),
    ]

    @Test("a plan reads back for its generation only, with each segment's progress")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        let journal = try SegmentJournal(path: directory.file("f.part.segments").path)
        #expect(journal.read(generation: 0) == nil, "a new journal holds no plan")
        journal.write(Self.plan, generation: 3)
        journal.record(index: 1, written: 500)
        var expected = Self.plan
        expected[1].written = 500
        #expect(journal.read(generation: 3) == expected)
        #expect(journal.read(generation: 4) == nil, "a plan of another generation is never used")
        journal.close()
    }

    @Test("the plan survives the process: a journal opened again on the file reads it")
    func reopen() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("f.part.segments").path
        let first = try SegmentJournal(path: path)
        first.write(Self.plan, generation: 1)
        first.record(index: 0, written: 999)
        first.close()
        let second = try SegmentJournal(path: path)
        #expect(second.read(generation: 1)?.first?.written == 999)
        second.close()
    }

    @Test("a symbolic link at the journal's path is refused, never followed")
    func symbolicLink() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("f.part.segments").path
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: directory.file("elsewhere").path)
        #expect(throws: DownloadError.self) { _ = try SegmentJournal(path: path) }
        #expect(!FileManager.default.fileExists(atPath: directory.file("elsewhere").path))
    }
}
