import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// `haul help SUB` and `haul SUB --help` as an 80-column terminal shows them.
    @Suite("haul's help")
    struct HelpCommandTests {
        static let subcommands = ["get", "add", "run", "list", "info", "pause", "resume", "remove", "serve"]

        /// The help of `arguments`, rendered for `columns` columns.
        static func help(_ arguments: [String], columns: Int) async throws -> String {
            let result = try await ChildProcess.run("haul", arguments, environment: ["COLUMNS": String(columns)])
            #expect(result.status == 0, "\(arguments): \(result.error)")
            return result.output
        }

        /// The lines of the "Examples:" block of a help text (up to the blank line after it).
        static func examples(in help: String) -> [Substring] {
            let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
            guard let start = lines.firstIndex(of: "Examples:") else { return [] }
            return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
        }

        /// Each option's entry (its first line and the indented lines after it) in the option sections.
        static func optionEntries(in help: String) -> [String] {
            var entries: [String] = []
            for line in help.split(separator: "\n") {
                if line.hasPrefix("  -") || line.hasPrefix("  <") {
                    entries.append(String(line))
                } else if line.hasPrefix("     "), !entries.isEmpty {
                    entries[entries.count - 1] += " " + line.trimmingCharacters(in: .whitespaces)
                }
            }
            return entries
        }

        @Test(
            "each subcommand's help fits 80 columns: no line longer, no example cut mid-command, each default once",
            arguments: subcommands)
        func fitsEightyColumns(subcommand: String) async throws {
            for arguments in [["help", subcommand], [subcommand, "--help"]] {
                let help = try await Self.help(arguments, columns: 80)
                for line in help.split(separator: "\n") {
                    #expect(line.count <= 80, "\(arguments): \(line.count) columns: \(line)")
                }
                // Wide, nothing is wrapped: the examples must be the same lines at 80 columns.
                let wide = try await Self.help(arguments, columns: 500)
                let examples = Self.examples(in: wide)
                #expect(!examples.isEmpty, "\(arguments) has examples")
                #expect(Self.examples(in: help) == examples, "\(arguments): an example wraps at 80 columns")
                for entry in Self.optionEntries(in: wide) {
                    let defaults = entry.components(separatedBy: "(default").count - 1
                    #expect(defaults <= 1, "\(arguments): the default is printed \(defaults) times: \(entry)")
                }
            }
        }

        @Test("options come in titled groups; fleet options only on the subcommands where they act")
        func groups() async throws {
            let get = try await Self.help(["help", "get"], columns: 200)
            for title in [
                "REQUEST OPTIONS:", "AUTHENTICATION OPTIONS:", "SPEED AND RETRIES:", "NETWORK OPTIONS:", "TLS OPTIONS:",
                "HOST OPTIONS:", "FLEET OPTIONS:", "OUTPUT OPTIONS:",
            ] {
                #expect(get.contains("\n\(title)\n"), "get: \(title)")
            }
            let fleet = get.components(separatedBy: "FLEET OPTIONS:").last ?? ""
            let section = fleet.components(separatedBy: "\n\n").first ?? ""
            for option in ["--database", "--worker-name", "--lease-timeout"] {
                #expect(section.contains(option), "get's fleet options: \(option)")
            }
            // A worker's options act only where downloads run.
            for subcommand in ["get", "run", "serve"] {
                let help = try await Self.help(["help", subcommand], columns: 200)
                #expect(help.contains("--worker-name") && help.contains("--lease-timeout"), "\(subcommand)")
                #expect(help.contains("--host-connections"), "\(subcommand)")
            }
            for subcommand in ["add", "list", "info", "pause", "resume", "remove"] {
                let help = try await Self.help(["help", subcommand], columns: 200)
                #expect(!help.contains("--worker-name") && !help.contains("--lease-timeout"), "\(subcommand)")
                #expect(!help.contains("--host-connections"), "\(subcommand)")
                #expect(help.contains("--database"), "\(subcommand) reads and edits a shared queue too")
            }
        }

        @Test("the top-level help fits 80 columns and names every exit status, 69 included")
        func topLevel() async throws {
            let help = try await Self.help(["--help"], columns: 80)
            for line in help.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
            let wide = try await Self.help(["--help"], columns: 500)
            #expect(Self.examples(in: help) == Self.examples(in: wide))
            #expect(wide.contains("69 'haul serve' cannot listen"))
        }
    }
}
