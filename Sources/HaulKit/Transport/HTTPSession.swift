import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1

/// How one manager sends a download's requests over the shared ``HTTPTransport``: redirects followed safely
/// (``RedirectPolicy``), authentication challenges answered (Basic, Digest) with the download's credentials or the
/// netrc file's, and cookies carried both ways.
struct HTTPSession: Sendable {
    let transport: HTTPTransport
    let netrc: Netrc?
    let cookies: CookieJar?
    /// The hosts that fail every request; their requests fail at once once that has lasted long enough.
    let gate: HostGate
    /// Every host's request schedule and backoff (``HostPacer``).
    let pacer: HostPacer
    let authenticator = Authenticator()

    /// Sends `GET url` with `profile`'s headers and the range, follows up to ``HTTPTransport/maximumRedirects``
    /// redirects and answers authentication challenges; returns once the final response head has arrived, with the
    /// URL it came from (parsed once here: AsyncHTTPClient's `response.url` parses its text on every read). A `401`
    /// that cannot be answered, or whose answer was refused, is returned.
    /// Credentials and custom headers go to `home`'s origin (default: `url`'s) unless the profile trusts others.
    func get(
        _ url: String, home homeURL: String? = nil, profile: RequestProfile, range: String? = nil,
        ifRange: String? = nil, decoding: Bool = false, logger: Logger
    ) async throws -> (response: HTTPClientResponse, url: URL) {
        // A plain URL's host is found in its bytes (Foundation's `host` percent-decodes a copy).
        guard var current = URL(string: url), URLHost.plain(url) != nil || current.host != nil else {
            throw DownloadError.invalidURL(url, reason: "it is not an absolute URL")
        }
        // nil while the request is still at `url` and no other home was named: `url` is trusted without working
        // out its origin (most requests are never redirected).
        var home = homeURL.flatMap(URL.init(string:)).map(Authenticator.origin(of:))
        var visited: Set<String> = []
        var redirects = 0
        var challengesAnswered = 0
        while true {
            let trusted =
                profile.redirects.trustsOtherOrigins || home.map { Authenticator.origin(of: current) == $0 } ?? true
            var headers = profile.fields(range: range, ifRange: ifRange, trusted: trusted)
            let userAuthorizes = headers.contains { $0.0.lowercased() == "authorization" }
            let credentials =
                userAuthorizes
                ? nil
                : (trusted ? profile.credentials : nil)
                    ?? netrc?.credentials(for: current.host ?? "", includingDefault: trusted)
            var sentAuthorization = false
            if let credentials, let value = authenticator.authorization(for: current, credentials: credentials) {
                headers.append(("Authorization", value))
                sentAuthorization = true
            }
            if let jar = cookies?.header(for: current) {
                if let index = headers.firstIndex(where: { $0.0.lowercased() == "cookie" }) {
                    headers[index].1 += "; " + jar
                } else {
                    headers.append(("Cookie", jar))
                }
            }

            logger.debug(
                "request",
                metadata: [
                    "url": "\(ProxySettings.masked(current.absoluteString))", "range": "\(range ?? "-")",
                    "if-range": "\(ifRange ?? "-")",
                ])
            if logger.logLevel <= .trace {
                logger.trace("request headers", metadata: ["headers": "\(Self.masked(headers))"])
            }
            // AsyncHTTPClient's own trace shows headers unmasked and bodies in hex: it gets debug at most.
            var clientLogger = logger
            clientLogger.logLevel = max(logger.logLevel, .debug)
            // No new async function here: each one's frame may cost an allocation per request.
            let probing = try admit(current, logger: logger)
            defer { if let probing { gate.probeEnded(probing) } }
            let host = current.host?.lowercased() ?? ""
            try await pacer.pace(host, pacing: profile.pacing, slot: profile.slot)
            let response: HTTPClientResponse
            do {
                response = try await transport.get(
                    current.absoluteString, headers: headers, decoding: decoding, logger: clientLogger)
            } catch let error where !Task.isCancelled && DownloadError.isHostFailure(error) {
                let unreachable = DownloadError.isUnreachable(error)
                // A host that answered before and now drops connections sheds load: it is throttling.
                await pacer.failed(host, underLoad: !unreachable && pacer.hasAnswered(host))
                let final = gate.failed(
                    transport.route(for: current), with: .mapping(error, stallTimeout: .zero),
                    unreachable: unreachable)
                throw final ?? error
            } catch {
                pacer.abandoned(host)
                throw error
            }
            let code = Int(response.status.code)
            await pacer.answered(
                host, status: code, reason: response.status.reasonPhrase,
                retryAfter: code == 429 || code == 503
                    ? response.headers.first(name: "Retry-After").flatMap { RetryAfter.delay(from: $0, now: Date()) }
                    : nil,
                headers: Self.rateLimitHeaders(response.headers))
            if code >= 500 || code == 408 || code == 429 {
                // An answer that says "not now" is no sign the host serves: a CDN in front of a dead origin says 502.
                gate.failed(
                    transport.route(for: current),
                    with: .httpStatus(code, reason: response.status.reasonPhrase, url: current.absoluteString))
            } else if gate.notesAnswers {
                gate.answered(transport.route(for: current))
            }
            logger.debug(
                "response",
                metadata: [
                    "status": "\(response.status.code)",
                    "content-length": "\(response.headers.first(name: "Content-Length") ?? "-")",
                    "content-range": "\(response.headers.first(name: "Content-Range") ?? "-")",
                    "etag": "\(response.headers.first(name: "ETag") ?? "-")",
                ])
            if logger.logLevel <= .trace {
                logger.trace(
                    "response headers",
                    metadata: ["headers": "\(Self.masked(response.headers.map { ($0.name, $0.value) }))"])
            }
            cookies?.store(response.headers["Set-Cookie"], from: current)
            let status = Int(response.status.code)

            if status == 401, let credentials, challengesAnswered < 2,
                authenticator.learn(
                    response.headers["WWW-Authenticate"], from: current, sentAuthorization: sentAuthorization)
            {
                logger.debug(
                    "answering an authentication challenge",
                    metadata: ["url": "\(current.absoluteString)", "user": "\(credentials.user)"])
                challengesAnswered += 1
                await discard(response)
                continue
            }

            guard [301, 302, 303, 307, 308].contains(status), let location = response.headers.first(name: "Location")
            else { return (response, current) }
            guard let target = URL(string: location, relativeTo: current)?.absoluteURL,
                let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
            else {
                throw DownloadError.malformedResponse(
                    "\(current.absoluteString) redirects to '\(ControlCharacters.removed(from: location))', which is "
                        + "not an http or https URL")
            }
            if current.scheme?.lowercased() == "https", scheme == "http", !profile.redirects.allowsInsecureRedirects {
                throw DownloadError.insecureRedirect(from: current.absoluteString, to: target.absoluteString)
            }
            guard redirects < HTTPTransport.maximumRedirects else {
                throw DownloadError.tooManyRedirects(limit: HTTPTransport.maximumRedirects)
            }
            if visited.isEmpty { visited.insert(current.absoluteString) }
            home = home ?? Authenticator.origin(of: current)
            guard visited.insert(target.absoluteString).inserted else { throw DownloadError.redirectLoop }
            logger.debug(
                "following a redirect",
                metadata: ["from": "\(current.absoluteString)", "to": "\(target.absoluteString)"])
            await discard(response)
            redirects += 1
            challengesAnswered = 0
            current = target
        }
    }

    /// Notes that bytes arrived from `url` (a response still being received): its host serves, whatever other
    /// requests to it meet (a server that refuses connections beyond a limit while it sends to the first ones).
    func noteProgress(from url: String) {
        if gate.isClear { return }
        guard let parsed = URL(string: url) else { return }
        gate.answered(transport.route(for: parsed))
    }

    /// Asks the ``HostGate`` whether a request may go to `url`: throws ``DownloadError/Code/hostDown`` when every
    /// request to its host has failed for long enough; returns the host's route when this request is the one that
    /// checks whether it is back (``HostGate/probeEnded(_:)`` must follow).
    private func admit(_ url: URL, logger: Logger) throws(DownloadError) -> String? {
        if gate.isClear { return nil }
        let route = transport.route(for: url)
        switch gate.admit(route) {
        case .send:
            return nil
        case .probe:
            logger.debug("trying a host that failed every request", metadata: ["host": "\(route)"])
            return route
        case .refuse(let error):
            throw error
        }
    }

    /// What the rate-limit fields of a response say (nothing, without reading them, when it has none).
    static func rateLimitHeaders(_ headers: HTTPHeaders) -> RateLimitHeaders {
        guard headers.contains(where: { namesRateLimit($0.name) }) else { return RateLimitHeaders() }
        return RateLimitHeaders(
            { name in
                let values = headers[name]
                return values.isEmpty ? nil : values.joined(separator: ", ")
            }, nowSeconds: Date().timeIntervalSince1970)
    }

    /// Whether a field's name contains `ratelimit` in any case (`RateLimit-Policy`, `X-RateLimit-Remaining`); it runs
    /// for every field of every response.
    static func namesRateLimit(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { ASCIISearch.contains($0, lowercased: rateLimitBytes) }
    }

    private static let rateLimitBytes = Array("ratelimit".utf8)

    /// Header fields as `Name: value` lines, the whole value of a credential (``HTTPHeaderField/isCredential``)
    /// masked.
    static func masked(_ headers: [(String, String)]) -> String {
        headers.map { name, value in
            "\(name): \(HTTPHeaderField(name: name, value: value).isCredential ? "***" : value)"
        }
        .joined(separator: "; ")
    }

    /// Reads and drops a small body (a redirect's, a refusal's, a probe's byte), so the connection can serve the next
    /// request; a large one, or one that stalls, is abandoned (its connection closes).
    func discard(_ response: HTTPClientResponse) async {
        let body = response.body
        do {
            try await transport.watchdog.watch { watch in
                var read = 0
                for try await part in body {
                    watch.waiting()  // a part came: the stall timeout counts again from here
                    read += part.readableBytes
                    if read > 64 * 1024 { return }
                }
            }
        } catch {
            // The next request opens another connection.
        }
    }
}
