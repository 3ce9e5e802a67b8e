import Testing

@testable import HaulKit

@Suite("Download identifiers")
struct DownloadIDTests {
    @Test("an id hashes as its hash(into:) says, and a set of many finds each")
    func hashing() {
        for raw: Int64 in [0, 1, -1, 42, .max, .min] {
            let id = DownloadID(rawValue: raw)
            var hasher = Hasher()
            id.hash(into: &hasher)
            #expect(id.hashValue == hasher.finalize())
            #expect(id.hashValue != DownloadID(rawValue: raw &+ 1).hashValue)
        }
        let ids = (1...10_000).map { DownloadID(rawValue: $0) }
        let set = Set(ids)
        #expect(set.count == ids.count)
        #expect(ids.allSatisfy { set.contains($0) })
        #expect(!set.contains(DownloadID(rawValue: 10_001)))
    }
}
