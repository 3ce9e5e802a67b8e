import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// The speeds `haul get` prints.
    @Suite("Speed on screen")
    struct SpeedCommandTests {
        /// `1.9 MiB/s` and the like, in bytes per second.
        static func rate(_ text: Substring) -> Double? {
            let parts = text.split(separator: " ")
            guard parts.count == 2, let value = Double(parts[0]) else { return nil }
            let units = ["B/s": 1.0, "KiB/s": 1024, "MiB/s": 1_048_576, "GiB/s": 1_073_741_824]
            return units[String(parts[1])].map { value * $0 }
        }

        /// A download interrupted at 5 MiB of 8, continued by the same command: the `saved` line's speed is what
        /// this run fetched over its time. `haul run` used to print no speed at all (it missed the start of the
        /// downloads its manager began at once), and `haul get` the whole size over this run's time when it first saw
        /// the job before its part file was counted.
        @Test(
            "the saved line of a resumed download gives the bytes this run fetched over its time, not the whole size",
            arguments: ["get", "run"])
        func resumedAverage(command: String) async throws {
            let origin = try await TestOrigin.start()
            let size = 8 * 1024 * 1024 + 13
            let url = origin.serve("/resumed.bin", size: size)
            let link = 2 * 1024 * 1024
            // The first run's response stops at 6 MiB (the second run's is whole): a Ctrl-C that comes late still
            // leaves bytes for the second run to fetch.
            origin.setFaults {
                $0.bytesPerSecond = link
                $0.stallAfter = 6 * 1024 * 1024
                $0.stallTimes = 1
            }
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path]
            let download = ["-x", "1", "-d", directory.path, url.absoluteString]
            if command == "run" {
                #expect(try await ChildProcess.run("haul", ["add"] + download + state).status == 0)
            }
            let arguments = command == "run" ? ["run"] + state : ["get"] + download + state
            let first = try ChildProcess(product: "haul", arguments: arguments)
            try #require(try await waitForFile(directory.file("resumed.bin.part").path, atLeast: 5 * 1024 * 1024))
            first.send(SIGINT)
            #expect(try await first.wait() == 130, "\(first.standardError)")

            let second = try await ChildProcess.run("haul", arguments)
            #expect(second.status == 0, "\(second.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("resumed.bin")), size: size) == nil)
            let range = origin.requests(to: "/resumed.bin").last?.range ?? ""
            let resumedAt = Int(range.dropFirst("bytes=".count).prefix { $0.isNumber }) ?? 0
            #expect(resumedAt >= 4 * 1024 * 1024, "the second run resumed (\(range))")
            // haul: #1 saved /…/resumed.bin: 8.0 MiB in 1.6 s, 1.9 MiB/s; not verified: the server sent no digest
            let line = try #require(second.error.split(separator: "\n").first { $0.contains(" saved ") })
            let saved = try #require(line.split(separator: ";").first)
            let shown = try #require(saved.split(separator: ", ").last.flatMap(Self.rate), "no speed: \(saved)")
            // The whole 8 MiB over this run's ~1.6 s would be about 5 MiB/s on a 2 MiB/s link.
            #expect(shown < 1.3 * Double(link), "\(saved): more than the link carries")
            #expect(shown > 0.4 * Double(link), "\(saved)")
            await origin.stop()
        }

        /// A terminal shows each row's speed from its first quarter second: on a 2 MiB/s link per download, with
        /// `-j 2`, each row's first speeds read about 2 MiB/s (they used to ramp from 0 over some six seconds: 281
        /// KiB/s where the truth was ~1.1 MiB/s).
        @Test("on a terminal, the first speeds shown are the link's, with no ramp from 0")
        func noRampOnTerminal() async throws {
            let script = URL(fileURLWithPath: "/usr/bin/script")
            try #require(FileManager.default.isExecutableFile(atPath: script.path), "util-linux script(1) is needed")
            let origin = try await TestOrigin.start()
            let link = 2 * 1024 * 1024
            let urls = ["/r1.bin", "/r2.bin"].map { origin.serve($0, size: 8 * 1024 * 1024) }
            origin.setFaults { $0.bytesPerSecond = link }
            let directory = TemporaryDirectory()
            let typescript = directory.file("typescript")
            let command =
                [
                    try ChildProcess.locate("haul").path, "get", "-j", "2", "-x", "1", "-d", directory.path,
                    "--state-dir", directory.file("state").path,
                ] + urls.map(\.absoluteString)
            let child = try ChildProcess(
                executable: script,
                arguments: ["-q", "-e", "-c", command.joined(separator: " "), typescript.path],
                environment: ["TERM": "xterm", "COLUMNS": "100"])
            #expect(try await child.wait() == 0, "\(child.standardError)")
            let screen = try String(contentsOf: typescript, encoding: .utf8)
            let rate = try NSRegularExpression(pattern: #"  ([0-9.]+ (?:B|KiB|MiB|GiB)/s)"#)
            for name in ["r1.bin", "r2.bin"] {
                let speeds = CommandLineTests.visibleLines(screen).filter { $0.hasPrefix(name + " ") }.compactMap {
                    line -> Double? in
                    let range = NSRange(line.startIndex..., in: line)
                    guard let match = rate.firstMatch(in: line, range: range),
                        let text = Range(match.range(at: 1), in: line)
                    else { return nil }
                    return Self.rate(line[text])
                }
                let first = Array(speeds.drop { $0 == 0 }.prefix(3))
                #expect(first.count == 3, "\(name): \(speeds)")
                for speed in first {
                    #expect(speed > 0.6 * Double(link) && speed < 1.5 * Double(link), "\(name): \(first)")
                }
            }
            await origin.stop()
        }
    }
}
