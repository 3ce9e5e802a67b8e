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

    @Test("a download's bytes this session are what its runs fetched, not what earlier runs left on disk")
    func fetchedThisSession() {
        var table = TransferTable()
        // What the manager says of a job that has just started: running, and 0 bytes (the part file's 6 MB are
        // not counted yet). Its start event comes after (held until the display is live).
        table.insert(Self.snapshot(1, state: .running))
        let id = DownloadID(rawValue: 1)
        func progress(_ received: Int64, fetched: Int64) {
            _ = table.apply(
                DownloadEvent(
                    id: id,
                    change: .progress(
                        DownloadProgress(
                            receivedBytes: received, expectedBytes: 10_000_000, bytesPerSecond: 1_000_000,
                            smoothedBytesPerSecond: 900_000, transferredBytes: fetched))))
        }
        _ = table.apply(DownloadEvent(id: id, change: .status(.running)))
        progress(7_065_536, fetched: 1_065_536)
        #expect(table[id]?.transferred == 1_065_536, "what this run fetched, the 64 KiB checked again included")
        #expect(table[id]?.estimatedSecondsLeft == 2_934_464.0 / 900_000, "the time left comes from the smoothed speed")
        // Paused by another command, then resumed: a second run, counted from 0 by the engine.
        _ = table.apply(DownloadEvent(id: id, change: .status(.paused)))
        _ = table.apply(DownloadEvent(id: id, change: .status(.running)))
        progress(10_000_000, fetched: 3_000_000)
        _ = table.apply(DownloadEvent(id: id, change: .status(.completed(file: URL(fileURLWithPath: "/d/1.bin")))))
        #expect(table[id]?.transferred == 4_065_536, "both runs of this session, the bytes on disk before neither")
        #expect(table[id]?.startedAt != nil && table[id]?.averageBytesPerSecond != nil)
    }
}
