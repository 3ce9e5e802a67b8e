import Foundation
import HTTPTypes
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

/// Issue 45, item 4: a `<script src>` from another page sends no `Origin`: JSONP is off unless asked for, and RPC
/// requests that the browser marks as coming from another site are refused.
@Suite("cross-site requests and JSONP")
struct FetchMetadataTests {
    static let params = Data(#"["token:s3cret"]"#.utf8).base64EncodedString()
    static let jsonp = "/jsonrpc?method=aria2.getGlobalStat&id=7&params=\(params)&jsoncallback=cb"
    static let fetchSite = HTTPField.Name("Sec-Fetch-Site")!

    @Test("JSONP is off by default: a callback gets an error as plain JSON, never a script")
    func jsonpOff() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            try await client.execute(uri: Self.jsonp, method: .get) { response in
                let text = String(buffer: response.body)
                #expect(response.status == .forbidden)
                #expect(!text.hasPrefix("cb("), "\(text)")
                #expect(text.contains("-32005"))
                #expect(response.headers[.contentType] == "application/json-rpc")
            }
            let plain = "/jsonrpc?method=aria2.getGlobalStat&id=7&params=\(Self.params)"
            try await client.execute(uri: plain, method: .get) { #expect($0.status == .ok, "GET without JSONP works") }
        }
    }

    @Test(
        "with JSONP on: a script from another site is refused; from this origin, or typed in, it is answered",
        arguments: [("cross-site", false), ("same-site", false), ("same-origin", true), ("none", true)])
    func jsonpFetchSite(_ site: String, _ answered: Bool) async throws {
        let harness = try await DaemonHarness.make { $0.enablesJSONP = true }
        try await harness.test { client in
            try await client.execute(uri: Self.jsonp, method: .get, headers: [Self.fetchSite: site]) { response in
                #expect((response.status == .ok) == answered)
                #expect(String(buffer: response.body).hasPrefix("cb(") == answered)
            }
        }
    }

    @Test("a same-site request is answered when its Referer is an origin named with --allow-origin")
    func sameSiteAllowed() async throws {
        let harness = try await DaemonHarness.make {
            $0.enablesJSONP = true
            $0.allowedOrigins = ["http://localhost:8080"]
        }
        try await harness.test { client in
            let headers: HTTPFields = [Self.fetchSite: "same-site", .referer: "http://localhost:8080/ui/index.html"]
            try await client.execute(uri: Self.jsonp, method: .get, headers: headers) { #expect($0.status == .ok) }
            let other: HTTPFields = [Self.fetchSite: "same-site", .referer: "http://localhost:9090/"]
            try await client.execute(uri: Self.jsonp, method: .get, headers: other) { #expect($0.status == .forbidden) }
        }
    }

    @Test("a cross-site POST without Origin is refused; the dashboard page itself may be linked to from anywhere")
    func crossSitePost() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let post = try await client.rpc("aria2.getGlobalStat", headers: [Self.fetchSite: "cross-site"])
            #expect(post.status == 403)
            try await client.execute(uri: "/", method: .get, headers: [Self.fetchSite: "cross-site"]) {
                #expect($0.status == .ok)
            }
        }
    }

    @Test("RPC answers are never sniffed as script nor cached")
    func answerHeaders() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let answer = try await client.rpc("system.listMethods", token: nil)
            #expect(answer.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            #expect(answer.headers[.cacheControl] == "no-store")
        }
    }
}
