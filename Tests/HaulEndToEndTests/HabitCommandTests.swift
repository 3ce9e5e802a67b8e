import Foundation
import HaulTestSupport
import Testing

@testable import haul

extension EndToEnd {
    /// What people type out of wget's and curl's habits.
    @Suite("Habits from wget and curl")
    struct HabitCommandTests {
        @Test("haul URL is haul get URL; -c/--continue is accepted; -O FILE is -o FILE; curl's -O URL keeps the name")
        func habits() async throws {
            let origin = try await TestOrigin.start()
            let urls = (0..<4).map { origin.serve("/h\($0).bin", size: 70_001 + $0) }
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path]
            let bare = try await ChildProcess.run(
                "haul", [urls[0].absoluteString, "-q"] + state, currentDirectory: directory.url)
            #expect(bare.status == 0, "haul URL downloads: \(bare.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("h0.bin")), size: 70_001) == nil)

            let wget = try await ChildProcess.run(
                "haul", ["-c", "-O", directory.file("named.bin").path, urls[1].absoluteString, "-q"] + state)
            #expect(wget.status == 0, "haul -c -O FILE URL: \(wget.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("named.bin")), size: 70_002) == nil)

            let continued = try await ChildProcess.run(
                "haul", ["get", "--continue", "-d", directory.path, urls[2].absoluteString, "-q"] + state)
            #expect(continued.status == 0, "\(continued.error)")
            #expect(directory.contents("h2.bin")?.count == 70_003)

            let curl = try await ChildProcess.run(
                "haul", ["get", "-O", urls[3].absoluteString, "-q"] + state, currentDirectory: directory.url)
            #expect(curl.status == 0, "curl's -O URL: \(curl.error)")
            #expect(directory.contents("h3.bin")?.count == 70_004)

            // The commands and haul's own options are as they were.
            let list = try await ChildProcess.run("haul", ["list"] + state)
            #expect(list.status == 0 && list.output.contains("h0.bin"), "\(list.error)")
            let version = try await ChildProcess.run("haul", ["--version"])
            #expect(version.status == 0 && !version.output.isEmpty)
            let help = try await ChildProcess.run("haul", ["--help"])
            #expect(help.status == 0 && help.output.contains("SUBCOMMANDS"))
            let unknown = try await ChildProcess.run("haul", ["frobnicate"])
            #expect(unknown.status == 64 && unknown.error.contains("frobnicate"))
            await origin.stop()
        }

        @Test("haul URL takes the config file's options for get")
        func configFile() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/cfg.bin", size: 50_000).absoluteString
            let directory = TemporaryDirectory()
            let config = directory.file("config")
            try "user-agent = FromConfig/1\nquiet\n".write(to: config, atomically: true, encoding: .utf8)
            let result = try await ChildProcess.run(
                "haul", [url, "-d", directory.path, "--state-dir", directory.file("state").path],
                environment: ["HAUL_CONFIG": config.path])
            #expect(result.status == 0, "\(result.error)")
            #expect(result.error.isEmpty, "quiet came from the file: \(result.error)")
            #expect(origin.requests(to: "/cfg.bin").last?.header("User-Agent") == "FromConfig/1")
            await origin.stop()
        }

        @Test(
            "a URL without a scheme is a usage error that suggests one, never a guess",
            arguments: [
                (["example.com/x.iso"], "did you mean https://example.com/x.iso?"),
                (["get", "example.com/x.iso"], "did you mean https://example.com/x.iso?"),
                (["get", "localhost:8080/a"], "did you mean http://localhost:8080/a?"),
                (["add", "www.example.org"], "did you mean https://www.example.org?"),
                (
                    ["get", "--mirror", "mirror.example/x.iso", "https://example.com/x.iso"],
                    "https://mirror.example/x.iso?"
                ),
                (["-c", "example.com/x.iso"], "did you mean https://example.com/x.iso?"),
                (["get", "ftp://example.com/a"], "is not an http:// or https:// URL"),
            ])
        func missingScheme(arguments: [String], message: String) async throws {
            let directory = TemporaryDirectory()
            let result = try await ChildProcess.run(
                "haul", arguments, environment: ["HAUL_STATE_DIR": directory.file("state").path])
            #expect(result.status == 64, "\(arguments): exit \(result.status): \(result.error)")
            #expect(result.error.contains(message), "\(arguments): \(result.error)")
            #expect(result.error.split(separator: "\n").count <= 3, "\(result.error)")
        }

        @Test("a list line without a scheme names the line and suggests one; a list file given as a URL suggests -i")
        func listWithoutScheme() async throws {
            let directory = TemporaryDirectory()
            let list = directory.file("urls.txt")
            try "https://example.com/a.iso\n# two\nexample.com/b.iso\n".write(
                to: list, atomically: true, encoding: .utf8)
            let environment = ["HAUL_STATE_DIR": directory.file("state").path]
            let listed = try await ChildProcess.run("haul", ["get", "-i", list.path], environment: environment)
            #expect(listed.status == 64)
            #expect(
                listed.error.contains("'example.com/b.iso' (\(list.path) line 3) is not a URL"), "\(listed.error)")
            #expect(listed.error.contains("did you mean https://example.com/b.iso?"), "\(listed.error)")
            let file = try await ChildProcess.run(
                "haul", ["urls.txt"], environment: environment, currentDirectory: directory.url)
            #expect(file.status == 64)
            #expect(file.error.contains("give -i urls.txt"), "\(file.error)")
        }

        @Test(
            "what looks like a URL or a host name",
            arguments: [
                ("https://example.com/a", true), ("example.com/x.iso", true), ("localhost:8080/a", true),
                ("192.168.1.2/f", true), ("[::1]:8080/", true), ("//example.com/a", true), ("list", false),
                ("frobnicate", false), ("-v", false), ("/tmp/a.iso", false), ("./a.iso", false), ("a b.com", false),
                ("host:port", false), ("example.", false),
            ])
        func looksLikeAddress(text: String, expected: Bool) {
            #expect(CommandLineHabits.looksLikeAddress(text) == expected, "\(text)")
        }

        @Test("the arguments haul parses for what was typed")
        func rewriting() {
            let cases: [([String], [String])] = [
                (["https://a/x"], ["get", "https://a/x"]),
                (["-c", "https://a/x"], ["get", "-c", "https://a/x"]),
                (["-x", "4", "a.example/x"], ["get", "-x", "4", "a.example/x"]),
                (["get", "-O", "https://a/x"], ["get", "https://a/x"]),
                (["get", "-O", "f.bin", "https://a/x"], ["get", "-O", "f.bin", "https://a/x"]),
                (["get", "--", "-O", "https://a/x"], ["get", "--", "-O", "https://a/x"]),
                (["list"], ["list"]), (["help", "get"], ["help", "get"]), (["--help"], ["--help"]),
                (["--version"], ["--version"]), (["-v", "get", "https://a/x"], ["-v", "get", "https://a/x"]),
                (["--generate-completion-script", "bash"], ["--generate-completion-script", "bash"]),
                (["frobnicate"], ["frobnicate"]), ([], []),
            ]
            for (typed, parsed) in cases {
                #expect(CommandLineHabits.arguments(typed) == parsed, "\(typed)")
            }
        }
    }
}
