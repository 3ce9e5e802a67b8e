import Foundation

/// A user name and password for servers that ask for them (HTTP Basic or Digest authentication).
///
/// Shown and logged masked (`name:***`); the password is kept only in the private state database.
public struct Credentials: Sendable, Hashable, Codable, CustomStringConvertible {
    public var user: String
    public var password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Parses `NAME:PASSWORD`, as curl's and wget's `--user` take it (the first colon separates them). Without a
    /// colon the password is nil: the caller asks for it.
    public static func parsing(_ text: String) throws(DownloadError) -> (user: String, password: String?) {
        guard let colon = text.firstIndex(of: ":") else {
            guard !text.isEmpty else { throw .invalidRequest("a user name cannot be empty") }
            return (text, nil)
        }
        let user = String(text[..<colon])
        guard !user.isEmpty else { throw .invalidRequest("a user name cannot be empty (got ':PASSWORD')") }
        return (user, String(text[text.index(after: colon)...]))
    }

    /// `name:***`.
    public var description: String { "\(user):***" }

    /// The credentials written in `url` (`https://name:password@host/…`, percent-decoded) and the URL without
    /// them; nil when it has none.
    public static func embedded(in url: URL) -> (credentials: Credentials, url: URL)? {
        // Most URLs have none: their parts are not taken apart again.
        guard url.user != nil else { return nil }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let user = components.user, !user.isEmpty
        else { return nil }
        let credentials = Credentials(user: user, password: components.password ?? "")
        components.user = nil
        components.password = nil
        guard let stripped = components.url else { return nil }
        return (credentials, stripped)
    }
}
