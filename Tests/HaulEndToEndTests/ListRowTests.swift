import Foundation
import Testing

@testable import HaulKit
@testable import haul

@Suite("haul list's rows")
struct ListRowTests {
    @Test("each column is padded to its width with spaces, by characters; a wider value is never cut")
    func padding() {
        #expect("7".leftPadded(to: 4) == "   7")
        #expect("queued".rightPadded(to: 10) == "queued    ")
        #expect("é".leftPadded(to: 3) == "  é")
        #expect("toolong".leftPadded(to: 3) == "toolong")
        #expect("".leftPadded(to: 0) == "")
        // More spaces than one append gives.
        #expect("x".rightPadded(to: 100) == "x" + String(repeating: " ", count: 99))
        #expect("x".leftPadded(to: 65) == String(repeating: " ", count: 64) + "x")
    }

    @Test("a row: id, state, progress, size and name in their columns")
    func row() {
        let snapshot = DownloadSnapshot(
            id: 7, url: URL(string: "http://a/7.bin")!, finalURL: nil, state: .running,
            progress: DownloadProgress(receivedBytes: 512, expectedBytes: 2048), file: nil, lastError: nil,
            options: DownloadOptions(), createdAt: Date(), startedAt: nil, completedAt: nil)
        var text = ""
        List.appendRow(snapshot, to: &text)
        // The state column fits its longest name, "interrupted".
        #expect(text == "   7  running       25%  512 B/2.0 KiB           http://a/7.bin\n")
    }
}
