import Foundation

/// Which web pages may talk to the daemon. A request without `Origin` (aria2p, curl, a script), or with a WebSocket
/// library's own `ws://` origin, is not from a page's script and is let through to the token check (``RequestGate``
/// looks at the fetch metadata of such requests); a page's request is accepted only from the daemon's own origin (its
/// dashboard: the scheme and the same host and port the request names, a `Host` that ``HostPolicy`` checked first) or
/// from an origin named with `--allow-origin`.
public struct OriginPolicy: Sendable {
    /// Origins allowed besides the daemon's own, as `scheme://host[:port]`, lowercased.
    public let allowed: Set<String>

    public init(allowed: [String]) {
        self.allowed = Set(allowed.map { Self.normalized($0) })
    }

    /// Whether a request with `origin` (nil: none) to `host` (its `Host` header) may proceed.
    public func permits(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        let normalized = Self.normalized(origin)
        // Several origins in one request is not something a browser sends.
        if normalized.contains(",") || normalized.contains(" ") { return false }
        // Browsers send the page's origin (http, https, or "null"); a WebSocket library that names its own ws://
        // URL is not a web page.
        if normalized.hasPrefix("ws://") || normalized.hasPrefix("wss://") { return true }
        if isListed(normalized) { return true }
        // The daemon's own pages: same host and port as the request went to.
        guard let host, let own = HostAuthority(parsing: host), let page = Self.parse(normalized) else { return false }
        return page.authority.host == own.host
            && (page.authority.port ?? page.defaultPort) == (own.port ?? page.defaultPort)
    }

    /// Whether a foreign origin is named (and so gets CORS headers).
    public func isListed(_ origin: String) -> Bool {
        allowed.contains(Self.normalized(origin)) || allowed.contains("*")
    }

    /// `scheme://authority` of an origin: http or https only (`null`, `file:` and the rest are no page of the daemon).
    static func parse(_ origin: String) -> (authority: HostAuthority, defaultPort: Int)? {
        for (scheme, port) in [("http://", 80), ("https://", 443)] where origin.hasPrefix(scheme) {
            return HostAuthority(parsing: String(origin.dropFirst(scheme.count))).map { ($0, port) }
        }
        return nil
    }

    static func normalized(_ origin: String) -> String {
        var text = origin.trimmingCharacters(in: .whitespaces).lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
