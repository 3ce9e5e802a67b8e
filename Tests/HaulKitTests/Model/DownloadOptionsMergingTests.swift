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

extension DownloadOptionsMergingTests {
    @Test("a front end says whether it named the count: -x 1 replaces -x 4, and no -x leaves -x 4 as it is")
    func connectionCountNamedOrNot() {
        var one = DownloadOptions(connections: 1)
        one.connectionCountGiven = true
        let fixedAtOne = DownloadOptions(connections: 4).merging(one)
        #expect(fixedAtOne.connections == 1 && !fixedAtOne.adaptiveConnections, "-x 1 after -x 4")
        #expect(fixedAtOne.connectionCountGiven == nil, "never kept")
        var unnamed = Self.auto
        unnamed.connectionCountGiven = false
        let kept = DownloadOptions(connections: 4).merging(unnamed)
        #expect(kept.connections == 4 && !kept.adaptiveConnections, "no -x (auto by default) after -x 4")
        var named = Self.auto
        named.connectionCountGiven = true
        let chosen = DownloadOptions(connections: 4).merging(named)
        #expect(chosen.connections == 16 && chosen.adaptiveConnections, "-x auto after -x 4")
    }
}
