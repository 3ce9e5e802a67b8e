import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// `haul --version` and `haul version`: what a bug report needs. (The stamped release build's commit and date are
    /// checked where one is built: `InstallTests`.)
    @Suite("haul's version")
    struct VersionCommandTests {
        @Test("--version names the version, and says that a plain swift build records no commit or date")
        func versionLine() async throws {
            let result = try await ChildProcess.run("haul", ["--version"])
            #expect(result.status == 0, "\(result.error)")
            let line = result.output.trimmingCharacters(in: .newlines)
            #expect(line.hasPrefix("haul 0."), "\(line)")
            #expect(line.contains("no commit recorded") && line.contains("no build date"), "\(line)")
            let command = try await ChildProcess.run("haul", ["version"])
            #expect(command.output.hasPrefix(line + "\n"), "haul version starts with the --version line")
        }

        @Test("version --json: the operating system, and the state database's schema version once it exists")
        func json() async throws {
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path]
            let before = try await Self.report(state)
            #expect(before["version"] as? String != nil)
            let os = try #require(before["os"] as? [String: Any])
            #expect((os["name"] as? String)?.isEmpty == false && (os["kernel"] as? String)?.isEmpty == false)
            #expect((os["architecture"] as? String)?.isEmpty == false)
            var database = try #require(before["stateDatabase"] as? [String: Any])
            #expect(database["kind"] as? String == "sqlite")
            #expect(database["location"] as? String == directory.file("state/haul.sqlite").path)
            #expect(database["schemaVersion"] == nil, "no database yet, and haul version made none")
            #expect(!FileManager.default.fileExists(atPath: directory.file("state/haul.sqlite").path))
            let known = try #require(database["knownSchemaVersion"] as? Int)
            #expect(known >= 5)

            let list = try await ChildProcess.run("haul", ["list"] + state)
            #expect(list.status == 0, "\(list.error)")
            database = try #require(try await Self.report(state)["stateDatabase"] as? [String: Any])
            #expect(database["schemaVersion"] as? Int == known)
        }

        @Test("version's help fits 80 columns")
        func help() async throws {
            let help = try await HelpCommandTests.help(["help", "version"], columns: 80)
            #expect(help.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(help)")
            #expect(help.contains("USAGE: haul version") && help.contains("--json"), "\(help)")
        }

        static func report(_ arguments: [String]) async throws -> [String: Any] {
            let result = try await ChildProcess.run("haul", ["version", "--json"] + arguments)
            #expect(result.status == 0, "\(result.error)")
            return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        }
    }
}
