import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Probing a URL")
struct ProbeTests {
    @Test("size, ranges, validators and name, after redirects, with nothing downloaded or recorded")
    func probe() async throws {
        let harness = try await Harness.make(inMemory: true)
        var resource = TestOrigin.Resource(size: 123_457)
        resource.contentDisposition = "attachment; filename=\"report 2026.pdf\""
        harness.origin.serve("/files/r.bin", resource)
        harness.origin.redirect("/latest", to: "/files/r.bin")
        let file = try await harness.manager.probe(harness.origin.url("/latest"))
        #expect(file.size == 123_457)
        #expect(file.acceptsRanges)
        #expect(file.status == 206)
        #expect(file.etag == resource.etag)
        #expect(file.lastModified == resource.lastModified)
        #expect(file.suggestedName == "report 2026.pdf")
        #expect(file.finalURL == harness.origin.url("/files/r.bin"))
        #expect(harness.origin.requests(to: "/files/r.bin").map(\.range) == ["bytes=0-0"])
        #expect(harness.origin.bodyBytesSent(to: "/files/r.bin") <= 1)  // counted once written: may lag
        #expect(await harness.manager.snapshots().isEmpty)
        let entries = try FileManager.default.contentsOfDirectory(atPath: harness.directory.path)
        #expect(entries.allSatisfy { $0 == "state" }, "\(entries)")

        harness.origin.setFaults { $0.ignoresRange = true }
        let whole = try await harness.manager.probe(harness.origin.url("/files/r.bin"))
        #expect(whole.size == 123_457 && !whole.acceptsRanges && whole.status == 200)
        harness.origin.setFaults { $0.ignoresRange = false }

        let missing = await #expect(throws: DownloadError.self) {
            try await harness.manager.probe(harness.origin.url("/nothing"))
        }
        #expect(missing?.httpStatus == 404)
        await harness.shutdown()
    }
}
