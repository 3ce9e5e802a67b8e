import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Downloading a file")
struct DownloadBasicsTests {
    @Test("streams the whole file to its destination, byte for byte")
    func downloadsFile() async throws {
        let harness = try await Harness.make()
        defer { Task { await harness.shutdown() } }
        let size = 3 * 1024 * 1024 + 17
        let url = harness.origin.serve("/files/data.bin", size: size)

        let id = try await harness.manager.add(url)
        let file = try await harness.manager.wait(for: id)

        #expect(file.lastPathComponent == "data.bin")
        expectContent(file, size: size)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".part"))
        let snapshot = try #require(await harness.manager.snapshot(id))
        #expect(snapshot.state == .completed)
        #expect(snapshot.totalBytes == Int64(size))
        #expect(snapshot.fraction == 1)
        let requests = harness.origin.requests(to: "/files/data.bin")
        #expect(requests.count == 1)
        #expect(requests.first?.range == "bytes=0-")
        #expect(requests.first?.header("Accept-Encoding") == "identity")
        #expect(requests.first?.ifRange == nil)
    }
}
