import Foundation
import Testing

@testable import HaulKit

@Suite("The manager's record table")
struct RecordTableTests {
    static func record(_ id: Int64, state: DownloadState = .queued) -> DownloadRecord {
        DownloadRecord(
            id: id, url: "http://a/\(id)", options: DownloadOptions(), state: state, createdAt: .distantPast,
            updatedAt: .distantPast)
    }

    @Test("random adds, replacements and removals leave it equal to a dictionary, in id order when asked")
    func matchesADictionary() {
        var generator = SystemRandomNumberGenerator()
        var table = RecordTable()
        var model: [DownloadID: DownloadRecord] = [:]
        table.reserveCapacity(100)
        for step in 0..<5_000 {
            let id = DownloadID(rawValue: Int64.random(in: 1...400, using: &generator))
            switch Int.random(in: 0..<11, using: &generator) {
            case 0..<5:
                let record = Self.record(id.rawValue, state: step.isMultiple(of: 2) ? .queued : .paused)
                table[id] = record
                model[id] = record
            case 5..<8:
                #expect(table.removeValue(forKey: id) == model.removeValue(forKey: id))
            case 8:
                table[id] = nil
                model[id] = nil
            case 9:
                table[id]?.state = .failed
                model[id]?.state = .failed
            default:
                // In place: the same as a copy changed and set back, and nothing for a record not there.
                let changed = table.modify(id) { record -> DownloadState in
                    record.state = .interrupted
                    record.destinationPath = "/d/\(id.rawValue)"
                    return record.state
                }
                #expect(changed == (model[id] == nil ? nil : .interrupted))
                model[id]?.state = .interrupted
                model[id]?.destinationPath = "/d/\(id.rawValue)"
            }
            #expect(table[id] == model[id])
            #expect(table.contains(id) == (model[id] != nil))
            #expect(table.state(of: id) == model[id]?.state)
            #expect(table.destinationPath(of: id) == model[id]?.destinationPath)
            #expect(table.count == model.count)
        }
        #expect(Set(table.ids) == Set(model.keys))
        #expect(table.inIDOrder == model.keys.sorted().map { model[$0]! })
    }

    @Test("records that came in id order are handed back in that order without sorting; one at a time grows it")
    func order() {
        var table = RecordTable()
        for id in 1...1_000 {
            table.reserveCapacity(table.count + 1)
            table[DownloadID(rawValue: Int64(id))] = Self.record(Int64(id))
        }
        #expect(table.inIDOrder.map(\.id) == (1...1_000).map { Int64($0) })
        table.removeValue(forKey: 1)
        #expect(table.ids.first == 1_000, "the last record took the removed one's place")
        #expect(table.inIDOrder.map(\.id) == (2...1_000).map { Int64($0) })
    }

    @Test("a look at the store learns which records changed, were added or were removed here while it read")
    func changesDuringALook() {
        var table = RecordTable()
        for id in 1...4 { table[DownloadID(rawValue: Int64(id))] = Self.record(Int64(id)) }
        let (one, two, three, four, five) = (
            DownloadID(rawValue: 1), DownloadID(rawValue: 2), DownloadID(rawValue: 3), DownloadID(rawValue: 4),
            DownloadID(rawValue: 5)
        )
        let mark = table.beginLook()
        #expect(![one, two, three, four, five].contains { table.changed($0, since: mark) })
        table.modify(two) { $0.state = .paused }
        table[five] = Self.record(5)
        table.removeValue(forKey: three)
        // The last row moved into the removed one's place: its number moved with it.
        #expect(table.changed(two, since: mark))
        #expect(table.changed(five, since: mark))
        #expect(table.changed(three, since: mark))
        #expect(!table.changed(one, since: mark))
        #expect(!table.changed(four, since: mark))
        // A second look begun now sees only what changes after it.
        let later = table.beginLook()
        table[one]?.state = .paused
        #expect(table.changed(one, since: later) && table.changed(one, since: mark))
        #expect(!table.changed(two, since: later))
        #expect(!table.changed(three, since: later))
        table.endLook()
        #expect(table.changed(three, since: mark), "a removal is remembered while a look is under way")
        table.endLook()
        #expect(!table.changed(three, since: mark), "and forgotten once none is")
        table[three] = Self.record(3)
        #expect(table.changed(three, since: mark))
    }
}
