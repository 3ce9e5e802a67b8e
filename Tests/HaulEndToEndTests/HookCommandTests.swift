import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// aria2's `--on-download-*` hooks on `haul get` and `haul serve`, run as real processes.
    @Suite("Hooks")
    struct HookCommandTests {
        /// One run of the recording hook: its arguments and its HAUL_ variables.
        struct Call {
            var arguments: [String]
            var environment: [String: String]
            var event: String { environment["HAUL_EVENT"] ?? "?" }
            var id: Int { Int(environment["HAUL_ID"] ?? "") ?? -1 }
        }

        /// A hook that records each run in a file of its own under `directory/calls` and says a line.
        static func recordingHook(in directory: TemporaryDirectory) throws -> String {
            let script = directory.file("record-hook.sh")
            let calls = directory.file("calls").path
            try """
            #!/bin/sh
            mkdir -p \(calls)
            file=\(calls)/$HAUL_EVENT-$HAUL_ID-$$
            { echo "$#"; echo "$1"; echo "$2"; echo "$3"; env | grep '^HAUL_'; } > "$file.tmp" && mv "$file.tmp" "$file"
            echo "hook says $HAUL_EVENT $HAUL_ID"
            """.write(to: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
            return script.path
        }

        static func calls(in directory: TemporaryDirectory) -> [Call] {
            let folder = directory.file("calls").path
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.filter { !$0.hasSuffix(".tmp") }.sorted().compactMap { name in
                guard let text = try? String(contentsOfFile: folder + "/" + name, encoding: .utf8) else { return nil }
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                guard lines.count >= 4, let count = Int(lines[0]) else { return nil }
                var environment: [String: String] = [:]
                for line in lines.dropFirst(4) {
                    guard let equals = line.firstIndex(of: "=") else { continue }
                    environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
                }
                return Call(arguments: Array(lines[1..<(1 + min(count, 3))]), environment: environment)
            }
        }

        static func gid(_ id: Int) -> String {
            let digits = String(id, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }

        @Test("haul get runs each hook once per event, with aria2's arguments and the HAUL_ variables")
        func getRunsHooks() async throws {
            let origin = try await TestOrigin.start()
            let sizes = [100_000, 3_000]
            let urls = sizes.enumerated().map { origin.serve("/f\($0.offset).bin", size: $0.element) }
            let missing = origin.url("/missing.bin")
            origin.respond("/missing.bin", status: 404)
            let directory = TemporaryDirectory()
            let hook = try Self.recordingHook(in: directory)
            let downloads = directory.file("downloads")
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-v", "--state-dir", directory.file("state").path, "-d", downloads.path,
                    "--on-download-start", hook, "--on-download-complete", hook, "--on-download-error", hook,
                ] + (urls + [missing]).map(\.absoluteString))
            #expect(result.status != 0, "one of them fails")
            let calls = Self.calls(in: directory)
            // start for each, complete for the two files, error for the missing one: once each.
            let events = calls.map { "\($0.event) \($0.environment["HAUL_URL"] ?? "")" }.sorted()
            let expected =
                (urls + [missing]).map { "start \($0.absoluteString)" }
                + urls.map { "complete \($0.absoluteString)" } + ["error \(missing.absoluteString)"]
            #expect(events == expected.sorted(), "\(result.error)")
            for (index, url) in urls.enumerated() {
                let call = try #require(
                    calls.first { $0.event == "complete" && $0.environment["HAUL_URL"] == url.absoluteString })
                let file = downloads.appendingPathComponent(url.lastPathComponent).path
                #expect(call.arguments == [Self.gid(call.id), "1", file])
                #expect(call.environment["HAUL_GID"] == Self.gid(call.id))
                #expect(call.environment["HAUL_FILE"] == file)
                #expect(call.environment["HAUL_SIZE"] == String(sizes[index]))
                #expect(call.environment["HAUL_SHA256"] == TestContent.sha256(size: sizes[index]))
                #expect(call.environment["HAUL_ERROR_CODE"] == nil && call.environment["HAUL_EVENT_ID"]?.count == 32)
                #expect(FileManager.default.fileExists(atPath: file), "the hook runs once the file is in place")
            }
            let failure = try #require(calls.first { $0.event == "error" })
            #expect(Int(failure.environment["HAUL_ERROR_CODE"] ?? "") != nil)
            #expect(failure.environment["HAUL_ERROR"]?.contains("404") == true, "\(failure.environment)")
            // The hook's output is in the log (-v).
            #expect(result.error.contains("hook says complete"), "\(result.error)")
            await origin.stop()
        }

        @Test("haul serve runs the pause and stop hooks, and aria2.getGlobalOption shows the hooks")
        func serveRunsPauseAndStopHooks() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/slow.bin", size: 8 * 1024 * 1024)
            origin.setFaults { $0.bytesPerSecond = 512 * 1024 }
            let directory = TemporaryDirectory()
            let hook = try Self.recordingHook(in: directory)
            let daemon = try ChildProcess(
                product: "haul",
                arguments: [
                    "serve", "--port", "0", "--secret", "s", "-d", directory.file("downloads").path, "--state-dir",
                    directory.file("state").path, "--on-download-start", hook, "--on-download-pause", hook,
                    "--on-download-stop", hook, "--hook-timeout", "5",
                ])
            let rpc = try await RPC(daemon: daemon, secret: "s")
            let options = try #require(try await rpc.call("aria2.getGlobalOption", []) as? [String: Any])
            #expect(options["on-download-stop"] as? String == hook)
            #expect(options["on-download-complete"] == nil)
            let gid = try #require(try await rpc.call("aria2.addUri", [[url.absoluteString]]) as? String)
            try await Self.waitForCalls(directory, count: 1)
            _ = try await rpc.call("aria2.pause", [gid])
            try await Self.waitForCalls(directory, count: 2)
            _ = try await rpc.call("aria2.remove", [gid])
            try await Self.waitForCalls(directory, count: 3)
            try await Task.sleep(for: .milliseconds(500))
            let calls = Self.calls(in: directory)
            #expect(calls.map(\.event).sorted() == ["pause", "start", "stop"], "\(daemon.standardError)")
            #expect(calls.allSatisfy { $0.arguments.first == gid })
            #expect(daemon.standardError.contains("hook says pause"))
            daemon.send(SIGTERM)
            #expect(try await daemon.wait(timeout: .seconds(30)) == 0)
            try await rpc.shutdown()
            await origin.stop()
        }

        @Test("a hook set in the config file runs, and a hook that names no program is refused at start")
        func configFileAndBadHook() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/c.bin", size: 10_000)
            let directory = TemporaryDirectory()
            let hook = try Self.recordingHook(in: directory)
            let config = directory.file("config")
            try "on-download-complete = \(hook)\n".write(to: config, atomically: true, encoding: .utf8)
            let state = ["--state-dir", directory.file("state").path, "-d", directory.file("downloads").path]
            let result = try await ChildProcess.run(
                "haul", ["get", "-q"] + state + [url.absoluteString], environment: ["HAUL_CONFIG": config.path])
            #expect(result.status == 0, "\(result.error)")
            #expect(Self.calls(in: directory).map(\.event) == ["complete"])
            let refused = try await ChildProcess.run(
                "haul", ["get", "--on-download-complete", "no-such-program-here"] + state + [url.absoluteString])
            #expect(refused.status == 64)
            #expect(refused.error.contains("no command 'no-such-program-here' in PATH"), "\(refused.error)")
            await origin.stop()
        }

        static func waitForCalls(_ directory: TemporaryDirectory, count: Int) async throws {
            let start = ContinuousClock.now
            while calls(in: directory).count < count, start.duration(to: .now) < .seconds(20) {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(calls(in: directory).count >= count, "\(count) hook runs")
        }
    }
}
