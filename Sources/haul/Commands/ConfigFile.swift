import ArgumentParser
import Foundation

/// Default options from `$XDG_CONFIG_HOME/haul/config` (else `~/.config/haul/config`; `$HAUL_CONFIG` names another
/// file, empty for none): one long option a line, `connections = 8`, `--limit-rate 2M` or a bare flag such as
/// `insecure`, with `#` comments. Each line goes to every subcommand that has that option; the command line comes
/// after it, so what is typed wins.
enum ConfigFile {
    /// The file to read, or nil for none.
    static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let given = environment["HAUL_CONFIG"] { return given.isEmpty ? nil : given }
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config").path
        return (base as NSString).appendingPathComponent("haul/config")
    }

    /// One option of the file, as arguments (`["--name", "value"]` or `["--name"]`), with its line number.
    struct Entry: Equatable {
        var arguments: [String]
        var line: Int
    }

    /// The options of a config file's text; a line that is not an option is an error naming it.
    static func entries(of text: String, path: String) throws -> [Entry] {
        var entries: [Entry] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            var body = Substring(line)
            if body.hasPrefix("--") { body = body.dropFirst(2) }
            let split = body.firstIndex { $0 == "=" || $0 == " " || $0 == "\t" }
            let name = String(body[..<(split ?? body.endIndex)])
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                throw ValidationError(
                    "\(path) line \(index + 1): '\(line)' is not an option; write one long option a line, like "
                        + "'connections = 8' or 'insecure'")
            }
            var value = split.map { String(body[$0...]) }?.trimmingCharacters(in: .whitespaces) ?? ""
            if value.hasPrefix("=") { value = String(value.dropFirst()).trimmingCharacters(in: .whitespaces) }
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            entries.append(Entry(arguments: ["--\(name)"] + (value.isEmpty ? [] : [value]), line: index + 1))
        }
        return entries
    }

    /// `arguments` (without the program name) with the config file's options for their subcommand inserted after
    /// the subcommand's name. Without a subcommand, or a file, they are returned as they are.
    static func arguments(_ arguments: [String]) throws -> [String] {
        guard let path = path(), FileManager.default.fileExists(atPath: path),
            let position = arguments.firstIndex(where: { !$0.hasPrefix("-") }),
            let command = Haul.configuration.subcommands.first(where: {
                $0._commandName == arguments[position]
            })
        else { return arguments }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { throw ValidationError("cannot read the config file \(path) (HAUL_CONFIG= skips it)") }
        var accepted: [Entry] = []
        for entry in try entries(of: text, path: path) {
            if accepts(command, entry.arguments) {
                accepted.append(entry)
            } else if !Haul.configuration.subcommands.contains(where: { accepts($0, entry.arguments) }) {
                throw ValidationError("\(path) line \(entry.line): no haul command has \(entry.arguments[0])")
            }
        }
        return Array(arguments[...position]) + accepted.flatMap(\.arguments) + arguments[(position + 1)...]
    }

    /// Whether `command` has the option these arguments name: its help lists `--name`.
    private static func accepts(_ command: any ParsableCommand.Type, _ arguments: [String]) -> Bool {
        guard let name = arguments.first else { return false }
        let help = Haul.helpMessage(for: command, includeHidden: true, columns: 10_000)
        var rest = Substring(help)
        while let range = rest.range(of: name) {
            let after = rest[range.upperBound...].first
            if after.map({ !($0.isLetter || $0.isNumber || $0 == "-") }) ?? true { return true }
            rest = rest[range.upperBound...]
        }
        return false
    }
}
