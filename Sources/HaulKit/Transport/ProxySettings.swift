import Foundation

/// Which proxy each request goes through, as curl and wget decide it: an HTTP (or SOCKS5) proxy per scheme, and the
/// hosts reached directly.
///
/// ```swift
/// configuration.proxy = try ProxySettings.fromEnvironment(ProcessInfo.processInfo.environment)
/// configuration.proxy = try ProxySettings(all: URL(string: "http://user:pass@proxy.lan:3128")!)
/// ```
public struct ProxySettings: Sendable, Hashable, CustomStringConvertible {
    /// The proxy for `http` URLs; nil for none.
    public var http: URL?
    /// The proxy for `https` URLs (reached with `CONNECT`); nil for none.
    public var https: URL?
    /// Hosts reached directly, as `no_proxy` lists them: `*` for all, a name (also its subdomains; a leading dot
    /// is allowed), an IP address.
    public var bypass: [String]

    /// Checks each proxy URL: `http://[user:password@]host[:port]` (port 1080 when absent, as curl), or
    /// `socks5://` / `socks5h://host[:port]` without credentials.
    public init(http: URL? = nil, https: URL? = nil, bypass: [String] = []) throws(DownloadError) {
        for proxy in [http, https].compactMap({ $0 }) { _ = try Self.endpoint(proxy) }
        self.http = http
        self.https = https
        self.bypass = bypass.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    /// One proxy for every scheme.
    public init(all proxy: URL, bypass: [String] = []) throws(DownloadError) {
        try self.init(http: proxy, https: proxy, bypass: bypass)
    }

    /// The proxies the environment names, as curl reads them: `http_proxy`, `https_proxy`, `all_proxy` and
    /// `no_proxy` (comma-separated), each also in upper case (lower case wins). Nil when none is set.
    public static func fromEnvironment(_ environment: [String: String]) throws(DownloadError) -> ProxySettings? {
        func value(_ name: String) -> String? {
            for key in [name, name.uppercased()] {
                if let text = environment[key]?.trimmingCharacters(in: .whitespaces), !text.isEmpty { return text }
            }
            return nil
        }
        func url(_ name: String) throws(DownloadError) -> URL? {
            guard let text = value(name) else { return nil }
            let withScheme = text.contains("://") ? text : "http://" + text
            guard let url = URL(string: withScheme) else {
                throw .invalidRequest("\(name) is not a proxy URL: \(masked(text))")
            }
            return url
        }
        let all = try url("all_proxy")
        let http = try url("http_proxy") ?? all
        let https = try url("https_proxy") ?? all
        guard http != nil || https != nil else { return nil }
        let bypass = value("no_proxy")?.split(separator: ",").map(String.init) ?? []
        return try ProxySettings(http: http, https: https, bypass: bypass)
    }

    /// The proxy for `url`, or nil to connect directly.
    public func proxy(for url: URL) -> URL? {
        guard let host = url.host?.lowercased() else { return nil }
        if bypasses(host) { return nil }
        return url.scheme?.lowercased() == "https" ? https : http
    }

    /// Whether `host` is listed in ``bypass``.
    func bypasses(_ host: String) -> Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        for entry in bypass {
            if entry == "*" { return true }
            var name = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            // An entry may name a port; a bypass by host covers every port here.
            if let colon = name.lastIndex(of: ":"), !name.contains("]"), name.filter({ $0 == ":" }).count == 1 {
                name = String(name[..<colon])
            }
            name = name.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            if host == name || host.hasSuffix("." + name) { return true }
        }
        return false
    }

    /// Where a proxy URL points and how to reach it.
    struct Endpoint: Hashable, Sendable {
        enum Kind: Hashable, Sendable { case http, socks5 }
        var kind: Kind
        var host: String
        var port: Int
        var username: String?
        var password: String?
    }

    static func endpoint(_ proxy: URL) throws(DownloadError) -> Endpoint {
        let scheme = proxy.scheme?.lowercased() ?? "http"
        guard let host = proxy.host, !host.isEmpty else {
            throw .invalidRequest("the proxy \(masked(proxy.absoluteString)) has no host")
        }
        let username = proxy.user.map { $0.removingPercentEncoding ?? $0 }
        let password = proxy.password.map { $0.removingPercentEncoding ?? $0 }
        switch scheme {
        case "http":
            return Endpoint(kind: .http, host: host, port: proxy.port ?? 1080, username: username, password: password)
        case "socks5", "socks5h":
            guard username == nil else {
                throw .invalidRequest("SOCKS5 proxies with a user name are not supported: use an HTTP proxy")
            }
            return Endpoint(kind: .socks5, host: host, port: proxy.port ?? 1080)
        default:
            throw .invalidRequest(
                "the proxy \(masked(proxy.absoluteString)) uses \(scheme)://; Haul speaks http:// and socks5:// proxies"
            )
        }
    }

    /// `url` with its password replaced by `***`, for messages.
    package static func masked(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }

    public var description: String {
        let http = http.map { Self.masked($0.absoluteString) } ?? "none"
        let https = https.map { Self.masked($0.absoluteString) } ?? "none"
        return "http: \(http), https: \(https), bypass: \(bypass.joined(separator: ","))"
    }
}
