import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// HTTPS against an origin whose certificate a private authority signed (made with `openssl`).
@Suite(
    "TLS trust", .serialized,
    .enabled(if: TestCertificates.openssl != nil, "openssl is not installed"))
struct TLSTrustTests {
    /// Downloads `size` bytes from an HTTPS origin with `tls`; returns the error, if the download failed.
    static func download(
        _ certificates: TestCertificates, tls: TLSSettings, requiringClientCertificates: Bool = false
    ) async throws -> DownloadError? {
        let origin = try await TestOrigin.start(
            tls: try certificates.serverConfiguration(requiringClientCertificates: requiringClientCertificates))
        let harness = try await Harness.make(origin: origin) {
            $0.tls = tls
            $0.retry.maxAttempts = 2
        }
        let url = origin.serve("/secure.bin", size: 200_000)
        #expect(url.scheme == "https")
        let id = try await harness.manager.add(url)
        let manager = harness.manager
        var failure: DownloadError?
        do {
            let file = try await withDeadline(.seconds(60), "the HTTPS download") { try await manager.wait(for: id) }
            expectContent(file, size: 200_000)
        } catch let error as DownloadError {
            failure = error
        }
        await harness.shutdown()
        return failure
    }

    @Test("a private authority is refused by default, trusted when its certificate is given, skipped when insecure")
    func privateAuthority() async throws {
        let certificates = try await TestCertificates.make()
        let refused = try await Self.download(certificates, tls: .standard)
        #expect(refused?.code == .tlsFailure, "\(String(describing: refused))")
        #expect(
            try await Self.download(certificates, tls: .init(additionalTrustedCertificates: [certificates.ca])) == nil)
        #expect(try await Self.download(certificates, tls: .init(verifiesCertificates: false)) == nil)
    }

    @Test("a server that asks for a client certificate gets it (mutual TLS), and refuses a client without one")
    func mutualTLS() async throws {
        let certificates = try await TestCertificates.make()
        let trusted = TLSSettings(additionalTrustedCertificates: [certificates.ca])
        let without = try await Self.download(certificates, tls: trusted, requiringClientCertificates: true)
        #expect(without != nil, "no client certificate, no download")
        var withCertificate = trusted
        withCertificate.clientCertificate = certificates.clientCertificate
        withCertificate.clientPrivateKey = certificates.clientKey
        #expect(try await Self.download(certificates, tls: withCertificate, requiringClientCertificates: true) == nil)
    }

    @Test("a certificate file that cannot be read is an error when the manager opens, not at the first download")
    func badFile() async throws {
        let directory = TemporaryDirectory()
        var configuration = Harness.configuration(directory)
        configuration.tls = TLSSettings(additionalTrustedCertificates: [directory.file("missing.pem").path])
        await #expect(throws: DownloadError.self) { _ = try await DownloadManager(configuration: configuration) }
        configuration.tls = TLSSettings(clientCertificate: directory.file("c.pem").path)
        await #expect(throws: DownloadError.self) { _ = try await DownloadManager(configuration: configuration) }
    }
}
