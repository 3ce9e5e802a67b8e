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
            let started = ContinuousClock.now
            let refused = try await get("refused.bin", [])
            #expect(refused.status == 5 && refused.error.contains("TLS"), "\(refused.error)")
            #expect(refused.error.contains("not trusted") && refused.error.contains("--ca-certificate"))
            // A refused certificate is not retried (before, the connection pool retried it for the connect timeout).
            #expect(started.duration(to: .now) < .seconds(15))
            #expect(try await get("trusted.bin", ["--ca-certificate", certificates.ca]).status == 0)
            let insecure = try await get("insecure.bin", ["--insecure"])
            #expect(insecure.status == 0 && insecure.error.contains("warning: --insecure"), "\(insecure.error)")
            let lonely = try await get("x.bin", ["--certificate", certificates.clientCertificate])
            #expect(lonely.status == 64, "a certificate without its key is a usage error")
            await origin.stop()

            let mutual = try await TestOrigin.start(
                tls: try certificates.serverConfiguration(requiringClientCertificates: true))
            let url = mutual.serve("/mutual.bin", size: 20_000)
            let anonymous = try await ChildProcess.run(
                "haul",
                [
                    "get", url.absoluteString, "-o", directory.file("anonymous.bin").path, "-q", "--state-dir",
                    directory.file("state").path, "--ca-certificate", certificates.ca,
                ])
            #expect(anonymous.status == 5 && anonymous.error.contains("--certificate"), "\(anonymous.error)")
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

extension EndToEnd {
    /// `haul get` against nginx serving HTTPS with a certificate the test's private authority signed.
    @Suite(
        "haul against nginx over TLS",
        .enabled(if: TestCertificates.openssl != nil, "openssl is not installed (.ci/run installs it)"),
        .enabled(if: NginxServer.executable != nil, "nginx is not installed (.ci/run installs it)"))
    struct NginxTLSCommandTests {
        @Test("untrusted is refused; --ca-certificate fetches over four TLS connections; /mutual/ needs --certificate")
        func nginxTrust() async throws {
            let certificates = try await TestCertificates.make()
            let server = try await NginxServer.start(tls: certificates)
            let size = 6 * 1024 * 1024 + 77
            try await blocking {
                try Data(TestContent.bytes(0..<size)).write(to: server.root.appendingPathComponent("f.bin"))
            }
            let directory = TemporaryDirectory()
            func get(
                _ path: String, _ name: String, _ extra: [String]
            ) async throws -> (status: Int32, output: String, error: String) {
                try await ChildProcess.run(
                    "haul",
                    [
                        "get", server.url(path).absoluteString, "-o", directory.file(name).path, "-q", "--retries",
                        "1", "--state-dir", directory.file("state").path,
                    ] + extra)
            }
            let refused = try await get("/f.bin", "refused.bin", [])
            #expect(refused.status == 5 && refused.error.contains("TLS"), "\(refused.error)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("refused.bin").path))
            #expect(server.log.isEmpty, "no request is sent over an untrusted connection: \(server.log)")

            let trusted = try await get("/f.bin", "trusted.bin", ["--ca-certificate", certificates.ca, "-x", "4"])
            #expect(trusted.status == 0, "\(trusted.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("trusted.bin")), size: size) == nil)
            #expect(server.log.filter { $0.path == "/f.bin" && $0.status == 206 }.count >= 4, "\(server.log)")

            let anonymous = try await get("/mutual/f.bin", "anonymous.bin", ["--ca-certificate", certificates.ca])
            #expect(anonymous.status == 8 && anonymous.error.contains("403"), "\(anonymous.error)")
            let mutual = try await get(
                "/mutual/f.bin", "mutual.bin",
                [
                    "--ca-certificate", certificates.ca, "--certificate", certificates.clientCertificate,
                    "--private-key", certificates.clientKey,
                ])
            #expect(mutual.status == 0, "\(mutual.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("mutual.bin")), size: size) == nil)
            await server.stop()
        }
    }
}
