import HaulKit
import Testing

@testable import HaulServer

@Suite("GIDs")
struct GIDTests {
    static let known = [GID(raw: 1), GID(raw: 0x2a), GID(raw: 0x2b), GID(raw: 0xfff)]

    @Test("a GID is 16 hex digits of the download's number, the same on every start")
    func format() {
        #expect(GID(raw: 1).description == "0000000000000001")
        #expect(GID(DownloadID(rawValue: 0x2a)).description == "000000000000002a")
    }

    @Test("whole GIDs and unique prefixes resolve; others fail with aria2's messages")
    func resolve() throws {
        #expect(try GID.resolve("000000000000002a", among: Self.known) == GID(raw: 0x2a))
        #expect(try GID.resolve("0000000000000fF", among: Self.known) == GID(raw: 0xfff))
        #expect(throws: RPCError.failed("GID 00000000000000 is not unique")) {
            try GID.resolve("00000000000000", among: Self.known)
        }
        #expect(throws: RPCError.failed("GID 0000000000000003 is not found")) {
            try GID.resolve("0000000000000003", among: Self.known)
        }
        #expect(throws: RPCError.failed("Invalid GID xyz")) { try GID.resolve("xyz", among: Self.known) }
        #expect(throws: RPCError.failed("Invalid GID 00000000000000000")) {
            try GID.resolve("00000000000000000", among: Self.known)
        }
    }
}

extension GID {
    init(raw: Int64) { self.init(DownloadID(rawValue: raw)) }
}
