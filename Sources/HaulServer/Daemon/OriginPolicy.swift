import Foundation

/// Which web pages may talk to the daemon. A request without `Origin` (aria2p, curl, a script), or with a WebSocket
/// library's own `ws://` origin, is not from a page and is let through to the token check; a page's request is accepted only from the daemon's own origin (its
/// dashboard) or from an origin named with `--allow-origin`.
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
        if allowed.contains(normalized) || allowed.contains("*") { return true }
        // The daemon's own pages: same host and port as the request went to.
        guard let host, normalized != "null" else { return false }
        let own = host.lowercased()
        return normalized == "http://\(own)" || normalized == "https://\(own)"
    }

    /// Whether a foreign origin is named (and so gets CORS headers).
    public func isListed(_ origin: String) -> Bool {
        allowed.contains(Self.normalized(origin)) || allowed.contains("*")
    }

    static func normalized(_ origin: String) -> String {
        var text = origin.trimmingCharacters(in: .whitespaces).lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
