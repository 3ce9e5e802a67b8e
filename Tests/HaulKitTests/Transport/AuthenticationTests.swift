import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Authentication")
struct AuthenticationTests {
    // MARK: - Pure parts

    @Test("WWW-Authenticate with several challenges, quoted commas and escapes")
    func parsesChallenges() {
        let challenges = AuthenticationChallenge.parse([
            #"Digest realm="a, b", nonce="n\"1", qop="auth,auth-int", algorithm=SHA-256, Basic realm="x""#,
            "Bearer",
        ])
        #expect(challenges.map(\.scheme) == ["digest", "basic", "bearer"])
        #expect(challenges[0].parameters["realm"] == "a, b")
        #expect(challenges[0].parameters["nonce"] == "n\"1")
        #expect(challenges[0].parameters["qop"] == "auth,auth-int")
        #expect(challenges[0].parameters["algorithm"] == "SHA-256")
        #expect(challenges[1].parameters["realm"] == "x")
    }

    @Test("Digest responses match RFC 2617 and RFC 7616's worked examples (MD5 and SHA-256)")
    func digestVectors() throws {
        let rfc2617 = try #require(
            DigestAuthorization(
                AuthenticationChallenge(
                    scheme: "digest",
                    parameters: [
                        "realm": "testrealm@host.com", "nonce": "dcd98b7102dd2f0e8b11d0f600bfb0c093", "qop": "auth",
                        "opaque": "5ccc069c403ebaf9f0171e9517f40e41",
                    ])))
        let value = rfc2617.value(
            method: "GET", uri: "/dir/index.html", credentials: Credentials(user: "Mufasa", password: "Circle Of Life"),
            nonceCount: 1, clientNonce: "0a4f113b")
        #expect(value.contains(#"response="6629fae49393a05397450978507c4ef1""#))
        #expect(value.contains("nc=00000001"))
        #expect(value.contains(#"opaque="5ccc069c403ebaf9f0171e9517f40e41""#))

        for (algorithm, expected) in [
            ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
            ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ] {
            let digest = try #require(
                DigestAuthorization(
                    AuthenticationChallenge(
                        scheme: "digest",
                        parameters: [
                            "realm": "http-auth@example.org", "qop": "auth, auth-int", "algorithm": algorithm,
                            "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
                        ])))
            let answer = digest.value(
                method: "GET", uri: "/dir/index.html",
                credentials: Credentials(user: "Mufasa", password: "Circle of Life"), nonceCount: 1,
                clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
            #expect(answer.contains(#"response="\#(expected)""#), "\(algorithm)")
        }
        // Only auth-int, or an unknown algorithm: not answered rather than answered wrongly.
        #expect(DigestAuthorization(.init(scheme: "digest", parameters: ["nonce": "n", "qop": "auth-int"])) == nil)
        #expect(
            DigestAuthorization(.init(scheme: "digest", parameters: ["nonce": "n", "algorithm": "SHA-512-256"])) == nil)
    }

    @Test("a netrc file: machines on one or many lines, quotes, comments, macros, default; the first entry wins")
    func parsesNetrc() throws {
        let netrc = try Netrc(
            parsing: """
                # a comment
                machine example.com login alice password "s3cret pass"
                machine files.example.org
                    login bob
                    password hunter2
                macdef init
                cd /pub
                machine not.a.machine login x password y

                machine EXAMPLE.com login mallory password nope
                default login anonymous password me@example.com
                """)
        #expect(netrc.credentials(for: "example.com") == Credentials(user: "alice", password: "s3cret pass"))
        #expect(netrc.credentials(for: "Files.Example.org") == Credentials(user: "bob", password: "hunter2"))
        #expect(netrc.credentials(for: "not.a.machine")?.user == "anonymous")
        #expect(netrc.credentials(for: "elsewhere") == Credentials(user: "anonymous", password: "me@example.com"))
        #expect(netrc.credentials(for: "elsewhere", includingDefault: false) == nil)
        #expect(throws: DownloadError.self) { try Netrc(parsing: "machine example.com login") }
    }

    @Test("--user's NAME[:PASSWORD] and credentials in a URL (percent-decoded, removed from it)")
    func parsesCredentials() throws {
        #expect(try Credentials.parsing("ann:pa:ss") == ("ann", "pa:ss"))
        #expect(try Credentials.parsing("ann") == ("ann", nil))
        #expect(throws: DownloadError.self) { try Credentials.parsing(":secret") }
        let embedded = try #require(Credentials.embedded(in: URL(string: "https://ann:p%40ss@host:8443/a?b=c")!))
        #expect(embedded.credentials == Credentials(user: "ann", password: "p@ss"))
        #expect(embedded.url.absoluteString == "https://host:8443/a?b=c")
        #expect(Credentials(user: "ann", password: "secret").description == "ann:***")
    }

    // MARK: - Against the origin

    @Test(
        "Basic and Digest (MD5, SHA-256, -sess, RFC 2069): one refusal per origin, then every request is authorized",
        arguments: [
            TestOrigin.Authentication.basic(user: "ann", password: "pa:ss word"),
            .digest(user: "ann", password: "pa:ss word"),
            .digest(user: "ann", password: "pa:ss word", algorithm: "SHA-256"),
            .digest(user: "ann", password: "pa:ss word", algorithm: "MD5-sess"),
            .digest(user: "ann", password: "pa:ss word", qop: false),
        ])
    func answersChallenges(_ authentication: TestOrigin.Authentication) async throws {
        let harness = try await Harness.make { $0.minimumSegmentSize = 128 * 1024 }
        let size = 1024 * 1024 + 17
        var resource = TestOrigin.Resource(size: size)
        resource.authentication = authentication
        let url = harness.origin.serve("/private.bin", resource)
        let id = try await harness.manager.add(
            url,
            options: .init(connections: 4, credentials: Credentials(user: "ann", password: "pa:ss word")))
        expectContent(try await harness.manager.wait(for: id), size: size)
        let statuses = harness.origin.requests(to: "/private.bin").map(\.status)
        #expect(statuses.filter { $0 == 401 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == 206 }.count >= 2, "\(statuses)")
        await harness.shutdown()
    }

    @Test("a stale Digest nonce is answered again without failing the download")
    func staleNonce() async throws {
        let harness = try await Harness.make()
        var resource = TestOrigin.Resource(size: 300_000)
        resource.authentication = .digest(user: "ann", password: "pw")
        let first = harness.origin.serve("/one.bin", resource)
        let second = harness.origin.serve("/two.bin", resource)
        let credentials = Credentials(user: "ann", password: "pw")
        expectContent(
            try await harness.manager.wait(
                for: try await harness.manager.add(first, options: .init(credentials: credentials))), size: 300_000)
        harness.origin.rotateNonce()
        expectContent(
            try await harness.manager.wait(
                for: try await harness.manager.add(second, options: .init(credentials: credentials))), size: 300_000)
        // The old nonce is refused once, as stale, and answered with the new one.
        #expect(harness.origin.requests(to: "/two.bin").map(\.status) == [401, 206])
        await harness.shutdown()
    }

    @Test("a wrong password fails once, clearly, without retrying; no credentials: the 401 says how to give them")
    func wrongPassword() async throws {
        let harness = try await Harness.make()
        var resource = TestOrigin.Resource(size: 10_000)
        resource.authentication = .basic(user: "ann", password: "right")
        let url = harness.origin.serve("/locked.bin", resource)
        let wrong = try await harness.manager.add(
            url, options: .init(credentials: Credentials(user: "ann", password: "wrong")))
        let error = try await #require(throws: DownloadError.self) { try await harness.manager.wait(for: wrong) }
        #expect(error.httpStatus == 401)
        #expect(!error.isTransient)
        #expect(error.suggestion.contains("--user"))
        #expect(harness.origin.requests(to: "/locked.bin").map(\.status) == [401, 401])
        await harness.shutdown()
    }

    @Test("credentials in the URL leave it and authorize the download; a netrc entry does too")
    func urlAndNetrcCredentials() async throws {
        let directory = TemporaryDirectory()
        let netrcFile = directory.file("netrc")
        let origin = try await TestOrigin.start()
        try "machine 127.0.0.1 login bob password from-netrc\n".write(to: netrcFile, atomically: true, encoding: .utf8)
        let harness = try await Harness.make(origin: origin, directory: directory) {
            $0.netrc = try? Netrc(contentsOf: netrcFile.path)
        }
        var resource = TestOrigin.Resource(size: 50_000)
        resource.authentication = .basic(user: "ann", password: "in url")
        let url = harness.origin.serve("/url.bin", resource)
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.user = "ann"
        components.password = "in url"
        let id = try await harness.manager.add(components.url!)
        expectContent(try await harness.manager.wait(for: id), size: 50_000)
        let snapshot = try #require(await harness.manager.snapshot(id))
        #expect(snapshot.url == url)
        #expect(snapshot.options.credentials == Credentials(user: "ann", password: "in url"))

        resource.authentication = .basic(user: "bob", password: "from-netrc")
        let netrcURL = harness.origin.serve("/netrc.bin", resource)
        expectContent(try await harness.manager.wait(for: try await harness.manager.add(netrcURL)), size: 50_000)
        await harness.shutdown()
    }
}
