import Testing

@testable import HaulKit

@Suite("Recognising a download asked for again")
struct ResourceKeyTests {
    @Test("a URL's key: itself without a signing parameter, else without them, whatever its characters")
    func keys() {
        #expect(ResourceKey.of("http://a/x.bin") == "http://a/x.bin")
        #expect(ResourceKey.of("http://a/x.bin?id=2") == "http://a/x.bin?id=2")
        #expect(ResourceKey.of("http://a/x.bin?X-Amz-Signature=9&id=2&Expires=1") == "http://a/x.bin?id=2")
        #expect(ResourceKey.of("http://a/x.bin?X-Amz-Signature=9&Expires=1") == "http://a/x.bin")
        #expect(ResourceKey.of("http://a/x.bin?sig=1#part") == "http://a/x.bin")
        #expect(ResourceKey.of("http://a/x.bin#frag?sig=1") == "http://a/x.bin#frag?sig=1", "a ? after the #")
        #expect(ResourceKey.of("http://a/ü/é.bin?token=1&n=é") == "http://a/ü/é.bin?n=é", "not ASCII")
        #expect(ResourceKey.of("http://a/e\u{301}?token=1") == "http://a/e\u{301}", "a combining mark before the ?")
        #expect(ResourceKey.of("http://a/x.bin?%73ig=1&b=2") == "http://a/x.bin?b=2", "a name percent-encoded")
        #expect(ResourceKey.same("http://a/x?sig=1", "http://a/x?sig=2"))
        #expect(!ResourceKey.same("http://a/x?id=1", "http://a/x?id=2"))
    }

    @Test("each record's owner is shown as its own, the last one kept")
    func ownersShown() async throws {
        let harness = try await Harness.make(inMemory: true)
        let get = ForegroundOwner(label: "haul get", host: "elsewhere", boot: "b", pid: 41, started: 7)
        let run = ForegroundOwner(label: "haul run", host: "elsewhere", boot: "b", pid: 42, started: 8)
        for _ in 0..<2 {
            #expect(await harness.manager.shownOwner(get.text) == "haul get (pid 41 on elsewhere)")
            #expect(await harness.manager.shownOwner(get.text) == "haul get (pid 41 on elsewhere)")
            #expect(await harness.manager.shownOwner(run.text) == "haul run (pid 42 on elsewhere)")
            #expect(await harness.manager.shownOwner("not an owner") == "not an owner", "shown as written")
        }
        await harness.shutdown()
    }
}
