#if os(Linux)  // open-file-description locks: two owners in one process keep apart only there
import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// The download locks: one owner per download, across processes (each ``DownloadLocks`` here is its own open file
/// description, as another process's would be), with a batch of claims taken in as few system calls as it can.
@Suite("Download locks")
struct DownloadLocksTests {
    /// Two owners of one lock file (the file may go once both have it open: the locks are on the open file).
    static func owners() throws -> (DownloadLocks, DownloadLocks) {
        let directory = TemporaryDirectory()
        let path = directory.file("haul.locks").path
        return (try DownloadLocks(path: path), try DownloadLocks(path: path))
    }

    @Test("a batch of consecutive ids is taken whole: the other owner sees every one held, and gets none")
    func takesABatch() throws {
        let (ours, theirs) = try Self.owners()
        let ids: [DownloadID] = [7, 5, 6, 8, 20, 21, 40]
        #expect(ours.tryLock(ids) == Array(repeating: true, count: ids.count))
        for id in ids { #expect(theirs.isHeldElsewhere(id), "download \(id)") }
        #expect(theirs.tryLock(ids + [9]) == Array(repeating: false, count: ids.count) + [true])
        #expect(!ours.isHeldElsewhere(7), "its own lock is not held elsewhere")
        #expect(ours.isHeldElsewhere(9))
    }

    @Test("in a batch meeting another owner's lock, the rest is still taken, one by one")
    func takesTheRestAroundAnotherOwner() throws {
        let (ours, theirs) = try Self.owners()
        #expect(theirs.tryLock(12))
        #expect(ours.tryLock([10, 11, 12, 13, 14]) == [true, true, false, true, true])
        #expect(theirs.tryLock([10, 11, 13, 14]) == [false, false, false, false])
        #expect(!theirs.isHeldElsewhere(12) && ours.isHeldElsewhere(12))
    }

    @Test("ids this owner holds, and ids repeated in a batch, are taken again")
    func takesItsOwnAgain() throws {
        let (ours, theirs) = try Self.owners()
        #expect(ours.tryLock(3))
        #expect(ours.tryLock([2, 3, 3, 4]) == [true, true, true, true])
        #expect(theirs.tryLock([2, 3, 4]) == [false, false, false])
        #expect(ours.tryLock([]) == [])
    }

    @Test("one id released out of a batch frees only that one; releasing all frees the rest")
    func releasesOneOfABatch() throws {
        let (ours, theirs) = try Self.owners()
        #expect(ours.tryLock([30, 31, 32]) == [true, true, true])
        ours.unlock(31)
        #expect(theirs.tryLock([30, 31, 32]) == [false, true, false])
        theirs.unlock(31)
        #expect(ours.tryLock(31))
        ours.unlockAll()
        #expect(theirs.tryLock([30, 31, 32]) == [true, true, true])
    }
}
#endif
