import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Segment board")
struct SegmentBoardTests {
    static func board(
        _ directory: TemporaryDirectory, verifying: Set<Int> = []
    ) throws -> (SegmentBoard, SegmentJournal) {
        let journal = try SegmentJournal(path: directory.file("f.part.segments").path)
        let planner = SegmentPlanner(total: 4 << 20, done: 0, connections: 2, minimumSize: 1 << 20)
        return (SegmentBoard(planner: planner, journal: journal, generation: 7, verifying: verifying), journal)
    }

    @Test("the plan is in the journal from the start, and each recorded write goes to it")
    func journalFollows() throws {
        let directory = TemporaryDirectory()
        let (board, journal) = try Self.board(directory)
        #expect(journal.read(generation: 7) == board.plan.segments)
        let claimed = try #require(board.claim())
        let room = board.record(claimed.segment.id, through: claimed.segment.start + 4_096)
        #expect(room == claimed.segment.end - claimed.segment.start - 4_096)
        #expect(journal.read(generation: 7) == board.plan.segments)
        #expect(board.plan.segments.first { $0.id == claimed.segment.id }?.written == 4_096)
        board.close()
    }

    @Test("a restored segment is verified by its first connection only")
    func verifiesOnce() throws {
        let directory = TemporaryDirectory()
        let (board, _) = try Self.board(directory, verifying: [0])
        let first = try #require(board.claim())
        #expect(first.segment.id == 0 && first.verify)
        board.release(first.segment.id)
        let again = try #require(board.claim())
        #expect(again.segment.id == 0 && !again.verify)
        board.close()
    }

    @Test("connections are counted; a record for an unknown segment leaves no room")
    func bookkeeping() throws {
        let directory = TemporaryDirectory()
        let (board, _) = try Self.board(directory)
        #expect(board.workerChanged(by: 1) == 1)
        #expect(board.workerChanged(by: 1) == 2)
        #expect(board.workerChanged(by: -1) == 1)
        #expect(board.record(99, through: 10) == 0)
        board.close()
    }
}
