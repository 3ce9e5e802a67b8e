import ArgumentParser
import Foundation
import HaulKit

/// Whom HTTPS downloads trust: shared by every command that downloads (`get`, `run`, `serve`).
struct TLSOptions: ParsableArguments {
    @Option(
        name: .customLong("ca-certificate"),
        help: ArgumentHelp(
            "Also trust the certificates in this PEM file (a private CA); repeatable.", valueName: "FILE"))
    var caCertificates: [String] = []

    @Flag(help: "Do not check server certificates (testing only: prints a warning on every run).")
    var insecure = false

    @Option(
        name: .customLong("certificate"),
        help: ArgumentHelp(
            "Client certificate (PEM) for servers that ask for one; needs --private-key.", valueName: "FILE"))
    var clientCertificate: String?

    @Option(
        name: .customLong("private-key"),
        help: ArgumentHelp("The client certificate's private key (PEM).", valueName: "FILE"))
    var clientKey: String?

    func validate() throws {
        if (clientCertificate == nil) != (clientKey == nil) {
            throw ValidationError("--certificate and --private-key go together")
        }
        for file in caCertificates + [clientCertificate, clientKey].compactMap({ $0 })
        where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("cannot read \(file)")
        }
    }

    /// The settings, warning on standard error when certificates are not checked.
    var settings: TLSSettings {
        if insecure {
            Console.error(
                "warning: --insecure: server certificates are not checked; anyone between you and the server can "
                    + "change what you download")
        }
        return TLSSettings(
            additionalTrustedCertificates: caCertificates, verifiesCertificates: !insecure,
            clientCertificate: clientCertificate, clientPrivateKey: clientKey)
    }
}
