import Foundation

/// Logins read from a `.netrc` file, as curl, wget and aria2 read it: `machine HOST login NAME password SECRET`
/// entries (on one line or many), a `default` entry for every other host, `macdef` blocks skipped.
public struct Netrc: Sendable, Hashable {
    /// The credentials per host name (lower-cased).
    public private(set) var machines: [String: Credentials]
    /// The credentials of the `default` entry.
    public private(set) var fallback: Credentials?

    /// Parses the text of a `.netrc` file.
    public init(parsing text: String) throws(DownloadError) {
        machines = [:]
        fallback = nil
        var tokens = Self.tokens(of: text)[...]
        var host: String?
        var isDefault = false
        var login: String?
        var password: String?
        func finish() {
            guard host != nil || isDefault, let login else { return }
            let credentials = Credentials(user: login, password: password ?? "")
            if let host {
                if machines[host] == nil { machines[host] = credentials }  // the first entry wins, as in curl
            } else if fallback == nil {
                fallback = credentials
            }
        }
        while let token = tokens.popFirst() {
            switch token {
            case "machine", "default":
                finish()
                login = nil
                password = nil
                if token == "machine" {
                    guard let name = tokens.popFirst() else {
                        throw .invalidRequest("the netrc file ends after 'machine'")
                    }
                    host = name.lowercased()
                    isDefault = false
                } else {
                    host = nil
                    isDefault = true
                }
            case "login", "password", "account":
                guard let value = tokens.popFirst() else {
                    throw .invalidRequest("the netrc file ends after '\(token)'")
                }
                if token == "login" { login = value } else if token == "password" { password = value }
            case "macdef":
                // A macro runs to the next empty line; its text is not tokens.
                finish()
                host = nil
                isDefault = false
                _ = tokens.popFirst()
                while let next = tokens.first, next != "\n\n" { tokens.removeFirst() }
            case "\n\n":
                continue
            default:
                continue  // unknown words are ignored, as by curl
            }
        }
        finish()
    }

    /// Reads and parses `path`.
    public init(contentsOf path: String) throws(DownloadError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .invalidRequest("cannot read the netrc file \(path): \(error.localizedDescription)")
        }
        try self.init(parsing: text)
    }

    /// `$NETRC` if set, else `~/.netrc`.
    public static var defaultPath: String {
        if let path = ProcessInfo.processInfo.environment["NETRC"], !path.isEmpty { return path }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".netrc").path
    }

    /// The login for `host`: its `machine` entry, else (when `includingDefault`) the `default` one.
    public func credentials(for host: String, includingDefault: Bool = true) -> Credentials? {
        machines[host.lowercased()] ?? (includingDefault ? fallback : nil)
    }

    /// Words separated by white space, with `"quoted words"` (backslash escapes inside), `#` comments to the end of
    /// the line, and a `"\n\n"` token for each empty line (which ends a macro).
    private static func tokens(of text: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        var newlines = 0
        var inToken = false
        var comment = false
        for character in text {
            if comment {
                if character.isNewline {
                    comment = false
                    newlines += 1
                }
                continue
            }
            if quoted {
                if escaped {
                    current.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                } else {
                    current.append(character)
                }
                continue
            }
            if character.isWhitespace {
                if inToken {
                    tokens.append(current)
                    current = ""
                    inToken = false
                }
                if character.isNewline {
                    newlines += 1
                    if newlines == 2 { tokens.append("\n\n") }
                }
                continue
            }
            if !inToken, character == "#" {
                comment = true
                continue
            }
            newlines = 0
            inToken = true
            if character == "\"" { quoted = true } else { current.append(character) }
        }
        if inToken { tokens.append(current) }
        return tokens
    }
}
