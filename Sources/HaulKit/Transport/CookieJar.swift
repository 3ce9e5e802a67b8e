import Foundation
import Synchronization

/// Cookies kept across requests, read from and written to the Netscape cookie file that curl, wget and aria2 share.
///
/// Requests carry the cookies whose domain, path and `Secure` flag match (RFC 6265 §5.4); `Set-Cookie` in any
/// response, redirects included, updates the jar. Give the same jar to ``DownloadManager/Configuration/cookies`` and
/// call ``save(to:)`` when done.
public final class CookieJar: Sendable {
    /// One cookie.
    public struct Cookie: Sendable, Hashable {
        /// The domain, without a leading dot.
        public var domain: String
        /// Whether subdomains of ``domain`` get it too (a `Domain` attribute was given); else only that host.
        public var includesSubdomains: Bool
        public var path: String
        /// Sent over https only.
        public var secure: Bool
        /// When it expires; nil for a session cookie.
        public var expires: Date?
        public var name: String
        public var value: String
        public var httpOnly: Bool

        public init(
            domain: String, includesSubdomains: Bool = false, path: String = "/", secure: Bool = false,
            expires: Date? = nil, name: String, value: String, httpOnly: Bool = false
        ) {
            self.domain = domain.lowercased()
            self.includesSubdomains = includesSubdomains
            self.path = path
            self.secure = secure
            self.expires = expires
            self.name = name
            self.value = value
            self.httpOnly = httpOnly
        }

        func matches(host: String, path requestPath: String, secure isSecure: Bool, now: Date) -> Bool {
            if let expires, expires <= now { return false }
            if secure, !isSecure { return false }
            let host = host.lowercased()
            guard host == domain || (includesSubdomains && host.hasSuffix("." + domain)) else { return false }
            if requestPath == path { return true }
            guard requestPath.hasPrefix(path) else { return false }
            return path.hasSuffix("/") || requestPath.dropFirst(path.count).hasPrefix("/")
        }
    }

    private let cookies = Mutex<[Cookie]>([])

    /// An empty jar.
    public init() {}

    /// A jar holding the cookies of the Netscape cookie file at `path`.
    public convenience init(contentsOf path: String) throws(DownloadError) {
        self.init()
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .invalidRequest("cannot read the cookie file \(path): \(error.localizedDescription)")
        }
        try load(netscape: text)
    }

    /// Every cookie held, expired ones included until they are saved.
    public var all: [Cookie] { cookies.withLock { $0 } }

    /// Adds the cookies of a Netscape cookie file's text (tab-separated: domain, subdomains flag, path, secure flag,
    /// expiry in Unix seconds or 0, name, value; `#HttpOnly_` before the domain marks an HttpOnly cookie).
    public func load(netscape text: String) throws(DownloadError) {
        var loaded: [Cookie] = []
        for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            var line = Substring(line)
            var httpOnly = false
            if line.hasPrefix("#HttpOnly_") {
                httpOnly = true
                line = line.dropFirst("#HttpOnly_".count)
            } else if line.hasPrefix("#") || line.trimmingWhitespace().isEmpty {
                continue
            }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 7, let seconds = Int64(fields[4].trimmingWhitespace()) else {
                throw .invalidRequest(
                    "line \(number + 1) of the cookie file is not 7 tab-separated fields of the Netscape format")
            }
            var domain = String(fields[0])
            if domain.hasPrefix(".") { domain.removeFirst() }
            loaded.append(
                Cookie(
                    domain: domain, includesSubdomains: fields[1].uppercased() == "TRUE", path: String(fields[2]),
                    secure: fields[3].uppercased() == "TRUE",
                    expires: seconds == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds)),
                    name: String(fields[5]), value: fields[6...].joined(separator: "\t"), httpOnly: httpOnly))
        }
        cookies.withLock { cookies in
            for cookie in loaded { Self.put(cookie, into: &cookies) }
        }
    }

    /// The jar as a Netscape cookie file, without expired cookies. Session cookies are written with expiry 0.
    public func netscapeText(now: Date = Date()) -> String {
        var text = "# Netscape HTTP Cookie File\n# Written by Haul. Edit with care.\n\n"
        for cookie in all where cookie.expires.map({ $0 > now }) ?? true {
            let domain = (cookie.includesSubdomains ? "." : "") + cookie.domain
            let fields = [
                (cookie.httpOnly ? "#HttpOnly_" : "") + domain, cookie.includesSubdomains ? "TRUE" : "FALSE",
                cookie.path, cookie.secure ? "TRUE" : "FALSE",
                String(cookie.expires.map { Int64($0.timeIntervalSince1970) } ?? 0), cookie.name, cookie.value,
            ]
            text += fields.joined(separator: "\t") + "\n"
        }
        return text
    }

    /// Writes the jar to `path` (replaced atomically, readable by its owner only: cookies are credentials).
    public func save(to path: String) throws(DownloadError) {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).haul-tmp")
        do {
            try Data(netscapeText().utf8).write(to: temporary)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: temporary.path)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw .fileSystem(path: path, reason: "cannot save the cookies: \(error.localizedDescription)")
        }
        do {
            try FileSystem.rename(temporary.path, to: path)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// The `Cookie` header value for a request to `url`, or nil when no cookie matches. Longer paths first.
    func header(for url: URL, now: Date = Date()) -> String? {
        guard let host = url.host else { return nil }
        let path = url.path.isEmpty ? "/" : url.path
        let secure = url.scheme?.lowercased() == "https"
        let matching = all.filter { $0.matches(host: host, path: path, secure: secure, now: now) }
            .sorted { $0.path.count > $1.path.count }
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Takes the `Set-Cookie` values of a response from `url` (RFC 6265 §5.2–5.3): a `Domain` that does not cover
    /// the host is ignored, a past expiry or `Max-Age` of 0 deletes.
    func store(_ setCookies: [String], from url: URL, now: Date = Date()) {
        guard let host = url.host?.lowercased(), !setCookies.isEmpty else { return }
        var parsed: [Cookie] = []
        for header in setCookies {
            let parts = header.split(separator: ";", omittingEmptySubsequences: false)
            guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
            let name = pair[..<equals].trimmingWhitespace()
            guard !name.isEmpty else { continue }
            var cookie = Cookie(
                domain: host, path: Self.defaultPath(of: url), name: name,
                value: pair[pair.index(after: equals)...].trimmingWhitespace())
            var maxAge: Int64?
            var rejected = false
            for attribute in parts.dropFirst() {
                let pieces = attribute.split(separator: "=", maxSplits: 1)
                let key = (pieces.first.map { $0.trimmingWhitespace() } ?? "").lowercased()
                let value = pieces.count > 1 ? pieces[1].trimmingWhitespace() : ""
                switch key {
                case "domain" where !value.isEmpty:
                    var domain = value.lowercased()
                    if domain.hasPrefix(".") { domain.removeFirst() }
                    if host == domain || host.hasSuffix("." + domain) {
                        cookie.domain = domain
                        cookie.includesSubdomains = true
                    } else {
                        rejected = true
                    }
                case "path" where value.hasPrefix("/"): cookie.path = value
                case "secure": cookie.secure = true
                case "httponly": cookie.httpOnly = true
                case "max-age": maxAge = Int64(value)
                case "expires": if maxAge == nil, let date = Self.cookieDate(value) { cookie.expires = date }
                default: break
                }
            }
            if rejected { continue }
            if let maxAge { cookie.expires = now.addingTimeInterval(TimeInterval(max(0, maxAge))) }
            parsed.append(cookie)
        }
        cookies.withLock { cookies in
            for cookie in parsed {
                if let expires = cookie.expires, expires <= now {
                    cookies.removeAll { Self.sameSlot($0, cookie) }
                } else {
                    Self.put(cookie, into: &cookies)
                }
            }
        }
    }

    private static func put(_ cookie: Cookie, into cookies: inout [Cookie]) {
        if let index = cookies.firstIndex(where: { sameSlot($0, cookie) }) {
            cookies[index] = cookie
        } else {
            cookies.append(cookie)
        }
    }

    private static func sameSlot(_ a: Cookie, _ b: Cookie) -> Bool {
        a.name == b.name && a.domain == b.domain && a.path == b.path
    }

    /// The directory of the request path (RFC 6265 §5.1.4).
    private static func defaultPath(of url: URL) -> String {
        let path = url.path
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    private static func cookieDate(_ text: String) -> Date? {
        if let date = HTTPDate.parse(text) { return date }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd-MMM-yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
