import Foundation

/// Whom HTTPS downloads trust and how they prove who they are: the system's roots plus any certificates given,
/// certificate checks (on unless turned off for testing), and a client certificate for servers that ask for one.
public struct TLSSettings: Sendable, Hashable {
    /// PEM files whose certificates are trusted besides the system's roots (a private CA).
    public var additionalTrustedCertificates: [String]
    /// Whether server certificates are verified. Off only to test against a server you control: nothing then tells
    /// the real server from anyone in between.
    public var verifiesCertificates: Bool
    /// A PEM file with the client certificate (chain) to present (mutual TLS), and the PEM file of its private key.
    public var clientCertificate: String?
    public var clientPrivateKey: String?

    public init(
        additionalTrustedCertificates: [String] = [], verifiesCertificates: Bool = true,
        clientCertificate: String? = nil, clientPrivateKey: String? = nil
    ) {
        self.additionalTrustedCertificates = additionalTrustedCertificates
        self.verifiesCertificates = verifiesCertificates
        self.clientCertificate = clientCertificate
        self.clientPrivateKey = clientPrivateKey
    }

    /// The system's trust and checks, nothing else.
    public static let standard = TLSSettings()
}
