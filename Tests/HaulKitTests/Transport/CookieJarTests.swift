import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Cookies")
struct CookieJarTests {
    @Test("Set-Cookie: domain, path, Secure, Max-Age and Expires decide which requests carry a cookie")
    func matching() throws {
        let jar = CookieJar()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let page = URL(string: "https://www.example.com/docs/index.html")!
        jar.store(
            [
                "a=1", "b=2; Domain=.example.com; Path=/", "c=3; Path=/docs/private", "d=4; Secure",
                "e=5; Max-Age=60", "f=6; Domain=other.org", "g=7; Expires=Wed, 21 Oct 2015 07:28:00 GMT",
            ], from: page, now: now)
        #expect(Set(jar.all.map(\.name)) == ["a", "b", "c", "d", "e"])
        func names(_ url: String, at date: Date = now) -> String? {
            jar.header(for: URL(string: url)!, now: date)
        }
        // Longer paths first; a, d and e have the default path /docs.
        #expect(names("https://www.example.com/docs/x") == "a=1; d=4; e=5; b=2")
        #expect(names("https://www.example.com/docs/private/y") == "c=3; a=1; d=4; e=5; b=2")
        #expect(names("http://www.example.com/docs/x") == "a=1; e=5; b=2")  // d is Secure
        #expect(names("https://api.example.com/") == "b=2")  // host-only cookies stay on www
        #expect(names("https://www.example.com/docsmore") == "b=2")  // /docs does not match /docsmore
        #expect(names("https://www.example.com/docs/x", at: now + 61) == "a=1; d=4; b=2")  // e expired
        jar.store(["a=gone; Max-Age=0"], from: page, now: now)
        #expect(!jar.all.map(\.name).contains("a"))
    }

    @Test("the Netscape file round-trips (subdomains, Secure, HttpOnly, session cookies) and is private")
    func netscapeFile() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("cookies.txt")
        try """
        # Netscape HTTP Cookie File
        .example.com\tTRUE\t/\tFALSE\t0\tsession\tabc
        #HttpOnly_www.example.com\tFALSE\t/app\tTRUE\t4102444800\tid\tx\ty

        """.write(to: file, atomically: true, encoding: .utf8)
        let jar = try CookieJar(contentsOf: file.path)
        #expect(jar.all.count == 2)
        let id = try #require(jar.all.first { $0.name == "id" })
        #expect(id.httpOnly && id.secure && !id.includesSubdomains && id.path == "/app" && id.value == "x\ty")
        let saved = directory.file("saved.txt")
        try jar.save(to: saved.path)
        let again = try CookieJar(contentsOf: saved.path)
        #expect(Set(again.all) == Set(jar.all))
        let permissions = try FileManager.default.attributesOfItem(atPath: saved.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        #expect(throws: DownloadError.self) { try CookieJar().load(netscape: "example.com\tTRUE\t/\n") }
    }

    @Test("a cookie set by a redirect is sent to the file; the jar keeps what the server set")
    func cookiesAcrossRedirects() async throws {
        let jar = CookieJar()
        try jar.load(netscape: "127.0.0.1\tFALSE\t/\tFALSE\t0\tloaded\tyes\n")
        let harness = try await Harness.make { $0.cookies = jar }
        var resource = TestOrigin.Resource(size: 40_000)
        resource.requiredCookie = "ticket=42"
        let url = harness.origin.serve("/files/data.bin", resource)
        harness.origin.redirect("/login", to: url.absoluteString, headers: [("Set-Cookie", "ticket=42; Path=/files")])
        let id = try await harness.manager.add(harness.origin.url("/login"))
        expectContent(try await harness.manager.wait(for: id), size: 40_000)
        #expect(harness.origin.requests(to: "/login").first?.header("Cookie") == "loaded=yes")
        #expect(harness.origin.requests(to: "/files/data.bin").first?.header("Cookie") == "ticket=42; loaded=yes")
        #expect(jar.all.contains { $0.name == "ticket" && $0.path == "/files" })
        await harness.shutdown()
    }
}
