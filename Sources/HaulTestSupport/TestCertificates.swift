import Foundation
import NIOSSL

/// A private certificate authority with a server certificate for 127.0.0.1 and a client certificate, made with the
/// `openssl` command in a temporary directory: HTTPS origins for tests, trusted only by whoever is given `ca`.
public struct TestCertificates: Sendable {
    public let directory: TemporaryDirectory
    /// The authority's certificate (PEM): what `--ca-certificate` is given.
    public var ca: String { directory.file("ca.pem").path }
    public var serverCertificate: String { directory.file("server.pem").path }
    public var serverKey: String { directory.file("server.key").path }
    public var clientCertificate: String { directory.file("client.pem").path }
    public var clientKey: String { directory.file("client.key").path }

    /// The `openssl` command, if installed.
    public static var openssl: URL? {
        ["/usr/bin/openssl", "/opt/homebrew/bin/openssl", "/usr/local/bin/openssl"]
            .map { URL(fileURLWithPath: $0) }.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Makes the authority and both certificates (elliptic-curve keys: quick).
    public static func make() async throws -> TestCertificates {
        try await blocking { try TestCertificates() }
    }

    private init() throws {
        directory = TemporaryDirectory("haul-certificates")
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Self.run(
            ["req", "-x509"] + key + [
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Haul Test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ], in: directory)
        for (name, usage) in [("server", "serverAuth"), ("client", "clientAuth")] {
            try Self.run(
                ["req"] + key + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=127.0.0.1"],
                in: directory)
            let extensions = """
                subjectAltName=IP:127.0.0.1,DNS:localhost
                basicConstraints=CA:FALSE
                keyUsage=digitalSignature
                extendedKeyUsage=\(usage)
                """
            try extensions.write(to: directory.file("\(name).ext"), atomically: true, encoding: .utf8)
            try Self.run(
                [
                    "x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", "\(name).pem", "-days", "2", "-extfile", "\(name).ext",
                ], in: directory)
        }
    }

    /// The server side of an HTTPS origin; with `requiringClientCertificates`, it accepts only clients whose
    /// certificate the authority signed (mutual TLS).
    public func serverConfiguration(requiringClientCertificates: Bool = false) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(serverCertificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: serverKey, format: .pem)))
        if requiringClientCertificates {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .file(ca)
        }
        return configuration
    }

    private static func run(_ arguments: [String], in directory: TemporaryDirectory) throws {
        guard let openssl else { throw TestCertificatesUnavailable() }
        let process = Process()
        process.executableURL = openssl
        process.arguments = arguments
        process.currentDirectoryURL = directory.url
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestCertificatesUnavailable(reason: "openssl \(arguments.prefix(2).joined(separator: " ")) failed")
        }
    }
}

/// `openssl` is not installed, or failed.
public struct TestCertificatesUnavailable: Error, CustomStringConvertible {
    public var reason = "openssl is not installed"
    public var description: String { reason }
}
