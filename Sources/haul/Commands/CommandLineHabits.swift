import Foundation

/// What people type out of habit from wget and curl, turned into Haul's own command line before it is parsed.
///
/// - `haul URL…` (or `haul -c URL…`) is `haul get URL…`: a first argument that names no subcommand and is no option
///   of `haul` itself (`--help`, `--version`, completions) but looks like a URL or a host name.
/// - curl's `-O URL` ("save under the URL's own name", what Haul always does) drops its `-O`; wget's `-O FILE` is
///   `-o FILE` (an option of `get` and `add`).
///
/// A URL without a scheme is not completed here: `get` and `add` refuse it with "did you mean https://…?"
/// (``withScheme(_:)``), since only the user knows whether the server speaks TLS.
enum CommandLineHabits {
    /// `arguments` (without the program name) as Haul parses them.
    static func arguments(_ arguments: [String]) -> [String] {
        guard let first = arguments.first else { return arguments }
        let commands = Set(Haul.configuration.subcommands.map { $0._commandName } + ["help"])
        var rewritten = arguments
        if first.hasPrefix("-") {
            // haul's own options, and options of a subcommand named later (`haul -v get URL` stays an error).
            let own = ["-h", "--help", "--version"]
            if own.contains(first) || first.hasPrefix("--generate-completion") || first.hasPrefix("--experimental")
                || arguments.contains(where: commands.contains)
                || !arguments.contains(where: { !$0.hasPrefix("-") && looksLikeAddress($0) })
            {
                return arguments
            }
            rewritten.insert("get", at: 0)
        } else if !commands.contains(first), looksLikeAddress(first) {
            rewritten.insert("get", at: 0)
        }
        guard rewritten.first == "get" || rewritten.first == "add" else { return rewritten }
        return droppingCurlRemoteName(rewritten)
    }

    /// curl's `-O URL`: the URL's own name is what Haul uses anyway, so the `-O` goes (before `--` only).
    private static func droppingCurlRemoteName(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--" { return result + arguments[index...] }
            if argument == "-O", index + 1 < arguments.endIndex, arguments[index + 1].contains("://") {
                index += 1
                continue
            }
            result.append(argument)
            index += 1
        }
        return result
    }

    /// Whether `text` looks like a URL (`scheme://…`, any scheme) or a host name with an optional port and path:
    /// `example.com/x.iso`, `localhost:8080/a`, `192.168.1.2/f`, `[::1]:8080/`.
    static func looksLikeAddress(_ text: String) -> Bool {
        if text.contains("://") { return true }
        var rest = Substring(text)
        if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
        guard let host = host(of: rest) else { return false }
        if host.lowercased() == "localhost" || host.hasPrefix("[") { return true }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }
            && host.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }
    }

    /// The host part of `text` (`host[:port][/path]`), or nil when it cannot be one.
    private static func host(of text: Substring) -> Substring? {
        guard let first = text.first, first.isLetter || first.isNumber || first == "[",
            !text.contains(where: \.isWhitespace)
        else { return nil }
        let authority = text.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            return authority[...close]
        }
        let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2, parts[1].isEmpty || !parts[1].allSatisfy(\.isNumber) { return nil }
        return parts[0].isEmpty ? nil : parts[0]
    }

    /// `text` with the scheme it lacks, to suggest (never to use): `https://example.com/x.iso`, or `http://` for
    /// this machine (`localhost:8080/a`), where a server rarely speaks TLS. Nil when `text` has a scheme or does not
    /// look like a host name.
    static func withScheme(_ text: String) -> String? {
        guard !text.contains("://"), looksLikeAddress(text) else { return nil }
        let rest = text.hasPrefix("//") ? String(text.dropFirst(2)) : text
        guard let host = host(of: Substring(rest)).map({ $0.lowercased() }) else { return nil }
        let local = host == "localhost" || host.hasPrefix("127.") || host == "[::1]"
        guard let url = URL(string: (local ? "http://" : "https://") + rest), url.host?.isEmpty == false else {
            return nil
        }
        return url.absoluteString
    }
}
