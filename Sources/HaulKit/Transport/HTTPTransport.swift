import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// Sends GET requests with AsyncHTTPClient, configured for downloading.
///
/// HTTP/1.1 only (parallel ranges over one HTTP/2 connection are slower), one request per call (``HTTPSession``
/// follows redirects), no decompression (ranges count the bytes as sent; a second client decodes, for servers that
/// compress although asked not to), a ``StallWatchdog`` instead of a read timeout to catch a body that stops, the
/// system trust store for TLS with what ``TLSSettings`` add, and the proxy ``ProxySettings`` choose per host.
/// Transports live as long as the process and are shared by managers with the same settings, so a manager that is
/// dropped without ``DownloadManager/shutdown()`` leaks nothing and crashes nothing.
final class HTTPTransport: Sendable {
    /// Redirects ``HTTPSession`` follows before it gives up.
    static let maximumRedirects = 10

    private struct Key: Hashable {
        var connectTimeout: Duration
        var stallTimeout: Duration
        var maxConnectionsPerHost: Int
        var proxy: ProxySettings?
        var tls: TLSSettings
        var addressFamily: AddressFamily?
    }

    private static let shared = Mutex<[Key: HTTPTransport]>([:])

    /// The process-wide transport for these settings.
    /// Throws when a certificate or key file of `tls` cannot be read.
    static func shared(
        connectTimeout: Duration, stallTimeout: Duration, maxConnectionsPerHost: Int, proxy: ProxySettings? = nil,
        tls: TLSSettings = .standard, addressFamily: AddressFamily? = nil
    ) throws(DownloadError) -> HTTPTransport {
        let key = Key(
            connectTimeout: connectTimeout, stallTimeout: stallTimeout, maxConnectionsPerHost: maxConnectionsPerHost,
            proxy: proxy, tls: tls, addressFamily: addressFamily)
        let tlsConfiguration = try Self.tlsConfiguration(tls)
        return shared.withLock { transports in
            if let existing = transports[key] { return existing }
            let transport = HTTPTransport(key, tlsConfiguration: tlsConfiguration)
            transports[key] = transport
            return transport
        }
    }

    /// NIOSSL's client configuration for `settings`: the system roots plus the extra certificates, verification
    /// unless turned off, and the client certificate and key when given. Files are read now, so a bad one is an
    /// error at start, not on the first download.
    static func tlsConfiguration(_ settings: TLSSettings) throws(DownloadError) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        do {
            for file in settings.additionalTrustedCertificates {
                let certificates = try NIOSSLCertificate.fromPEMFile(file)
                guard !certificates.isEmpty else {
                    throw DownloadError.invalidRequest("\(file) holds no PEM certificate")
                }
                configuration.additionalTrustRoots.append(.certificates(certificates))
            }
            if !settings.verifiesCertificates { configuration.certificateVerification = .none }
            switch (settings.clientCertificate, settings.clientPrivateKey) {
            case (let certificate?, let key?):
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            case (nil, nil):
                break
            default:
                throw DownloadError.invalidRequest(
                    "a client certificate needs its private key, and the other way round")
            }
        } catch let error as DownloadError {
            throw error
        } catch {
            throw .invalidRequest("cannot read a TLS certificate or key: \(error)")
        }
        return configuration
    }

    /// A client and its decoding twin (for servers that compress although asked not to), for one way out: direct,
    /// or through one proxy.
    private struct Clients {
        var plain: HTTPClient
        var decoding: HTTPClient
    }

    private let key: Key
    private let tlsConfiguration: TLSConfiguration
    /// Made on first use per way out; they live as long as the process, as the transport does.
    private let clients = Mutex<[ProxySettings.Endpoint?: Clients]>([:])
    private let headerDeadline: TimeAmount
    /// Ends response bodies that stall; everything that reads a body of this transport's goes through it.
    let watchdog: StallWatchdog

    private init(_ key: Key, tlsConfiguration: TLSConfiguration) {
        self.key = key
        self.tlsConfiguration = tlsConfiguration
        headerDeadline = TimeAmount(key.connectTimeout) + TimeAmount(key.stallTimeout)
        watchdog = StallWatchdog(timeout: key.stallTimeout)
    }

    private func clients(through proxy: ProxySettings.Endpoint?) -> Clients {
        clients.withLock { made in
            if let existing = made[proxy] { return existing }
            var configuration = HTTPClient.Configuration()
            configuration.httpVersion = .http1Only
            configuration.redirectConfiguration = .disallow  // HTTPSession follows them, with its own rules
            configuration.decompression = .disabled
            // No request spans: Haul reports through its own events (a span per request cost ~1.5% of the CPU of
            // many small files).
            configuration.tracing.tracer = nil
            // No read timeout: the watchdog times bodies, only while they are waited for (see `StallWatchdog`).
            configuration.timeout = .init(connect: TimeAmount(key.connectTimeout), read: nil)
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = key.maxConnectionsPerHost
            // A failed connection fails its request at once: Haul's own retry policy decides what happens next (a
            // refused certificate is not retried; a refused connection is, with backoff and within the retry
            // budget). AsyncHTTPClient would otherwise retry silently until the connect timeout.
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.tlsConfiguration = tlsConfiguration
            if let proxy {
                switch proxy.kind {
                case .http:
                    let authorization = proxy.username.map {
                        HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "")
                    }
                    configuration.proxy = .server(host: proxy.host, port: proxy.port, authorization: authorization)
                case .socks5:
                    configuration.proxy = .socksServer(host: proxy.host, port: proxy.port)
                }
            }
            let plain = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            // A decoded body may be much larger than the encoded one; the disk, not memory, takes it.
            configuration.decompression = .enabled(limit: .ratio(1000))
            let decoding = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            let pair = Clients(plain: plain, decoding: decoding)
            made[proxy] = pair
            return pair
        }
    }

    /// Where a request for `url` connects, in words: the proxy the settings choose for its host, else the host and
    /// port (`example.com:443`). Requests with one route share the host's fate in ``HostGate``.
    func route(for url: URL) -> String {
        if let settings = key.proxy, let proxy = settings.proxy(for: url),
            let endpoint = try? ProxySettings.endpoint(proxy)
        {
            return "the proxy \(endpoint.host):\(endpoint.port)"
        }
        let host = url.host ?? ""
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return "\(host.contains(":") ? "[\(host)]" : host.lowercased()):\(port)"
    }

    /// Sends `GET url` with `headers` and returns once the response head has arrived; the body streams after.
    /// With `decoding`, a gzip or deflate body arrives decoded. The request goes through the proxy the settings
    /// choose for its host.
    func get(
        _ url: String, headers: [(String, String)], decoding: Bool = false, logger: Logger
    ) async throws
        -> HTTPClientResponse
    {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        // Bound to the family's wildcard address, a connection can only be of that family.
        request.localAddress = key.addressFamily?.wildcard
        request.headers.reserveCapacity(headers.count)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let proxy = try key.proxy.flatMap { settings in
            try URL(string: url).flatMap(settings.proxy(for:)).map(ProxySettings.endpoint)
        }
        let pair = clients(through: proxy)
        return try await (decoding ? pair.decoding : pair.plain).execute(
            request, timeout: headerDeadline, logger: logger)
    }
}

extension ResponseHead {
    /// Extracts what resuming needs from a response. Text from the server never carries control characters
    /// onward (it ends up in errors shown on terminals).
    init(_ response: HTTPClientResponse, now: Date) {
        let headers = response.headers
        func single(_ name: String) -> String? {
            headers.first(name: name).map { value in
                let trimmed = value.trimmingWhitespace()
                return ControlCharacters.occur(in: trimmed) ? ControlCharacters.removed(from: trimmed) : trimmed
            }
        }
        self.init(
            status: Int(response.status.code),
            reason: ControlCharacters.removed(from: response.status.reasonPhrase),
            contentLength: single("Content-Length").flatMap { ContentRange.number($0.utf8) },
            contentRange: single("Content-Range"),
            etag: single("ETag"),
            lastModified: single("Last-Modified"),
            contentEncoding: single("Content-Encoding").flatMap { $0.lowercased() == "identity" ? nil : $0 },
            contentDisposition: single("Content-Disposition"),
            retryAfter: single("Retry-After").flatMap { RetryAfter.delay(from: $0, now: now) },
            digests: ServerDigests(headers),
            duplicates: headers.contains(name: "Link")
                ? DuplicateLinks.parse(headers["Link"], base: response.url) : []
        )
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
