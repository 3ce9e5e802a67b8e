import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// `haul get` against an HTTPS origin of a private authority: `--ca-certificate`, `--insecure`, client
    /// certificates.
    @Suite("haul and TLS trust", .enabled(if: TestCertificates.openssl != nil, "openssl is not installed"))
    struct TLSCommandTests {
        @Test("refused by default; --ca-certificate trusts the authority; --insecure works and warns; mutual TLS")
        func trust() async throws {
            let certificates = try await TestCertificates.make()
            let origin = try await TestOrigin.start(tls: try certificates.serverConfiguration())
            let directory = TemporaryDirectory()
            func get(_ name: String, _ extra: [String]) async throws -> (status: Int32, error: String) {
                let url = origin.serve("/\(name)", size: 20_000)
                let result = try await ChildProcess.run(
                    "haul",
                    [
                        "get", url.absoluteString, "-o", directory.file(name).path, "-q", "--retries", "1",
                        "--state-dir",
                        directory.file("state").path,
                    ] + extra)
                return (result.status, result.error)
            }
            let refused = try await get("refused.bin", [])
            #expect(refused.status == 1 && refused.error.contains("TLS"), "\(refused.error)")
            #expect(try await get("trusted.bin", ["--ca-certificate", certificates.ca]).status == 0)
            let insecure = try await get("insecure.bin", ["--insecure"])
            #expect(insecure.status == 0 && insecure.error.contains("warning: --insecure"), "\(insecure.error)")
            let lonely = try await get("x.bin", ["--certificate", certificates.clientCertificate])
            #expect(lonely.status == 64, "a certificate without its key is a usage error")
            await origin.stop()

            let mutual = try await TestOrigin.start(
                tls: try certificates.serverConfiguration(requiringClientCertificates: true))
            let url = mutual.serve("/mutual.bin", size: 20_000)
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", url.absoluteString, "-o", directory.file("mutual.bin").path, "-q", "--state-dir",
                    directory.file("state").path, "--ca-certificate", certificates.ca, "--certificate",
                    certificates.clientCertificate, "--private-key", certificates.clientKey,
                ])
            #expect(result.status == 0, "\(result.error)")
            await mutual.stop()
        }
    }
}
