import Foundation
import Testing

@testable import HaulKit
@testable import haul

@Suite("The session's transfer table")
struct TransferTableTests {
    static func snapshot(_ id: Int64, state: DownloadState = .queued) -> DownloadSnapshot {
        DownloadSnapshot(
            id: DownloadID(rawValue: id), url: URL(string: "http://a/\(id).bin")!, finalURL: nil, state: state,
            progress: DownloadProgress(receivedBytes: 0, expectedBytes: nil), file: nil, lastError: nil,
            options: DownloadOptions(), createdAt: Date(), startedAt: nil, completedAt: nil)
    }

    @Test("counts, running downloads and totals kept as events arrive equal the same computed from every entry")
    func keptTotals() {
        var generator = SystemRandomNumberGenerator()
        var table = TransferTable()
        for id in 1...50 { table.insert(Self.snapshot(Int64(id))) }
        for _ in 0..<3_000 {
            let id = DownloadID(rawValue: Int64.random(in: 1...60, using: &generator))
            let change: DownloadEvent.Change
            switch Int.random(in: 0..<8, using: &generator) {
            case 0: change = .status(.running)
            case 1: change = .status(.queued)
            case 2: change = .status(.paused)
            case 3: change = .status(.completed(file: URL(fileURLWithPath: "/d/\(id.rawValue).bin")))
            case 4: change = .status(.failed(.invalidRequest("no")))
            case 5: change = .restarted(.serverIgnoredRange)
            case 6: change = .added(Self.snapshot(id.rawValue))
            default:
                let received = Int64.random(in: 0...1_000, using: &generator)
                let expected: Int64? = Bool.random(using: &generator) ? 1_000 : nil
                change = .progress(
                    DownloadProgress(
                        receivedBytes: received, expectedBytes: expected, bytesPerSecond: 10, activeConnections: 1))
            }
            _ = table.apply(DownloadEvent(id: id, change: change))

            let all = table.all
            #expect(table.counts.filter { $0.value > 0 } == Dictionary(grouping: all, by: \.state).mapValues(\.count))
            #expect(table.running.map(\.id) == all.filter { $0.state == .running }.map(\.id))
            let counted = all.filter { $0.state != .failed }
            #expect(table.received == counted.reduce(0) { $0 + $1.received })
            let expected =
                counted.allSatisfy { $0.expected != nil } ? counted.reduce(Int64(0)) { $0 + ($1.expected ?? 0) } : nil
            #expect(table.expected == expected)
        }
        #expect(Set(table.all.map(\.id)).count == table.all.count, "each download once, in the order first seen")
    }
}
