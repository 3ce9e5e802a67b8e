import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    @Suite("haul's config file")
    struct ConfigFileCommandTests {
        @Test(
            "defaults from the config file apply to the commands that have them; the command line wins; bad lines fail")
        func configFile() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let url = origin.serve("/c.bin", size: 100_000).absoluteString
            let config = directory.file("config")
            try """
            # defaults
            user-agent = "FromConfig/1"
            --connections 1
            quiet

            """.write(to: config, atomically: true, encoding: .utf8)
            let environment = ["HAUL_CONFIG": config.path]
            let state = ["--state-dir", directory.file("state").path]
            let first = try await ChildProcess.run(
                "haul", ["get", url, "-o", directory.file("a.bin").path] + state, environment: environment)
            #expect(first.status == 0, "\(first.error)")
            #expect(first.output.isEmpty && first.error.isEmpty, "quiet came from the file: \(first.error)")
            #expect(origin.requests(to: "/c.bin").last?.header("User-Agent") == "FromConfig/1")
            let typed = try await ChildProcess.run(
                "haul", ["get", url, "-o", directory.file("b.bin").path, "-U", "Typed/2"] + state,
                environment: environment)
            #expect(typed.status == 0, "\(typed.error)")
            #expect(origin.requests(to: "/c.bin").last?.header("User-Agent") == "Typed/2")
            // `list` has none of these options: they are not given to it.
            let list = try await ChildProcess.run("haul", ["list"] + state, environment: environment)
            #expect(list.status == 0, "\(list.error)")

            try "connections = 8\nthis is not an option!\n".write(to: config, atomically: true, encoding: .utf8)
            let bad = try await ChildProcess.run("haul", ["get", url] + state, environment: environment)
            #expect(bad.status == 64)
            #expect(bad.error.contains("line 2"), "\(bad.error)")
            await origin.stop()
        }
    }
}
