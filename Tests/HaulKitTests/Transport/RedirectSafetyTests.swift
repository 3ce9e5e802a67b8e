import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("Safe redirects")
struct RedirectSafetyTests {
    /// A download added at `home`'s `/start`, redirected to `away`'s `/file.bin`, with a custom header, credentials,
    /// a User-Agent and a Referer.
    private func redirectAway(trusted: Bool) async throws -> (home: [TestOrigin.Request], away: [TestOrigin.Request]) {
        let away = try await TestOrigin.start()
        let harness = try await Harness.make()
        let target = away.serve("/file.bin", size: 70_000)
        harness.origin.redirect("/start", to: target.absoluteString)
        let options = DownloadOptions(
            headers: [
                .init(name: "X-Api-Token", value: "t0ken"), .init(name: "User-Agent", value: "agent/1"),
                .init(name: "Referer", value: "https://example.org/"), .init(name: "Authorization", value: "Bearer b"),
            ],
            credentials: Credentials(user: "ann", password: "pw"),
            redirects: .init(trustsOtherOrigins: trusted))
        let id = try await harness.manager.add(harness.origin.url("/start"), options: options)
        expectContent(try await harness.manager.wait(for: id), size: 70_000)
        #expect(await harness.manager.snapshot(id)?.finalURL == target)
        let requests = (harness.origin.requests(to: "/start"), away.requests(to: "/file.bin"))
        await harness.shutdown()
        await away.stop()
        return requests
    }

    @Test("credentials and custom headers stay with the added URL's origin; User-Agent and Referer go along")
    func untrustedRedirect() async throws {
        let (home, away) = try await redirectAway(trusted: false)
        #expect(home.first?.header("X-Api-Token") == "t0ken")
        #expect(home.first?.header("Authorization") == "Bearer b")
        let request = try #require(away.first)
        #expect(request.header("X-Api-Token") == nil)
        #expect(request.header("Authorization") == nil)
        #expect(request.header("User-Agent") == "agent/1")
        #expect(request.header("Referer") == "https://example.org/")
    }

    @Test("trusted redirects (--location-trusted) take them along")
    func trustedRedirect() async throws {
        let (_, away) = try await redirectAway(trusted: true)
        #expect(away.first?.header("X-Api-Token") == "t0ken")
        #expect(away.first?.header("Authorization") == "Bearer b")
    }

    @Test("the download's credentials answer a challenge from another origin only when redirects are trusted")
    func challengeAway() async throws {
        for trusted in [false, true] {
            let away = try await TestOrigin.start()
            let harness = try await Harness.make { $0.retry.maxAttempts = 1 }
            var resource = TestOrigin.Resource(size: 20_000)
            resource.authentication = .basic(user: "ann", password: "pw")
            harness.origin.redirect("/start", to: away.serve("/locked.bin", resource).absoluteString)
            let id = try await harness.manager.add(
                harness.origin.url("/start"),
                options: .init(
                    credentials: Credentials(user: "ann", password: "pw"),
                    redirects: .init(trustsOtherOrigins: trusted)))
            if trusted {
                expectContent(try await harness.manager.wait(for: id), size: 20_000)
            } else {
                let error = try await #require(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
                #expect(error.httpStatus == 401)
                #expect(away.requests(to: "/locked.bin").allSatisfy { $0.header("Authorization") == nil })
            }
            await harness.shutdown()
            await away.stop()
        }
    }

    @Test(
        "https → http is refused unless allowed",
        .enabled(if: TestCertificates.openssl != nil, "openssl is not installed"))
    func downgrade() async throws {
        let certificates = try await TestCertificates.make()
        let secure = try await TestOrigin.start(tls: try certificates.serverConfiguration())
        let plain = try await TestOrigin.start()
        let harness = try await Harness.make(origin: secure) {
            $0.tls = .init(additionalTrustedCertificates: [certificates.ca])
            $0.retry.maxAttempts = 1
        }
        secure.redirect("/start", to: plain.serve("/file.bin", size: 30_000).absoluteString)
        let refused = try await harness.manager.add(secure.url("/start"))
        let error = try await #require(throws: DownloadError.self) { try await harness.manager.wait(for: refused) }
        #expect(error.code == .insecureRedirect)
        #expect(plain.requests(to: "/file.bin").isEmpty)

        let allowed = try await harness.manager.add(
            secure.url("/start"), to: .file(harness.directory.url.appendingPathComponent("allowed.bin")),
            options: .init(redirects: .init(allowsInsecureRedirects: true)))
        expectContent(try await harness.manager.wait(for: allowed), size: 30_000)
        await harness.shutdown()
        await plain.stop()
    }

    @Test("a Location that is not http or https fails clearly")
    func foreignScheme() async throws {
        let harness = try await Harness.make { $0.retry.maxAttempts = 1 }
        harness.origin.redirect("/start", to: "ftp://127.0.0.1/file.bin")
        let id = try await harness.manager.add(harness.origin.url("/start"))
        let error = try await #require(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
        #expect(error.code == .malformedResponse)
        #expect(error.summary.contains("ftp://"))
        await harness.shutdown()
    }
}
