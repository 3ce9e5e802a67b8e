import Testing

@testable import HaulKit

/// A download asked for again takes the newer options where they speak (``DownloadOptions/merging(_:)``).
@Suite("Options of a download asked for again")
struct DownloadOptionsMergingTests {
    static let auto = DownloadOptions(connections: 16, adaptiveConnections: true)

    @Test("the connection count is one setting: a fixed count ends -x auto, and auto replaces a fixed count")
    func connectionCount() {
        let fixed = Self.auto.merging(DownloadOptions(connections: 4))
        #expect(fixed.connections == 4 && !fixed.adaptiveConnections, "-x 4 after -x auto")
        let chosen = DownloadOptions(connections: 4).merging(Self.auto)
        #expect(chosen.connections == 16 && chosen.adaptiveConnections, "-x auto after -x 4")
        let kept = Self.auto.merging(DownloadOptions())
        #expect(kept.connections == 16 && kept.adaptiveConnections, "options that say nothing keep the count")
    }
}
