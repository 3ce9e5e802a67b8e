import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// `haul serve` driven by a client nobody here wrote: aria2p's command line and library, from PyPI.
    @Suite(
        "haul serve with aria2p",
        .enabled(if: Aria2p.executable != nil, "aria2p is not installed in .build/python-venv (.ci/run installs it)"))
    struct Aria2pTests {
        static let secret = "e2e-secret"

        /// `haul serve` on a free port; returns the process and its port.
        static func serve(_ directory: TemporaryDirectory) async throws -> (ChildProcess, Int) {
            let child = try ChildProcess(
                product: "haul",
                arguments: [
                    "serve", "--port", "0", "--secret", secret, "-d", directory.file("downloads").path,
                    "--state-dir", directory.file("state").path,
                ])
            return (child, try await ServeStartup.port(of: child))
        }

        static func aria2p(_ port: Int, _ arguments: [String]) async throws -> (status: Int32, output: String) {
            let child = try ChildProcess(
                executable: URL(fileURLWithPath: Aria2p.executable ?? "aria2p"),
                arguments: ["-H", "http://127.0.0.1", "-p", String(port), "-s", secret] + arguments)
            let status = try await child.wait(timeout: .seconds(60))
            return (status, child.standardOutput + child.standardError)
        }

        @Test("aria2p's command line: add, show, pause, resume, remove, purge and call")
        func commandLine() async throws {
            let origin = try await TestOrigin.start()
            let small = origin.serve("/small.bin", size: 200_000)
            let slow = origin.serve("/slow.bin", size: 20_000_000)
            let directory = TemporaryDirectory()
            let (daemon, port) = try await Self.serve(directory)

            let added = try await Self.aria2p(port, ["add", small.absoluteString])
            #expect(added.status == 0, "\(added.output)")
            let gid = try #require(added.output.split(separator: " ").last.map { String($0.prefix(16)) })
            try await Self.waitFor(port, gid, "complete")
            #expect(
                FileManager.default.contents(atPath: directory.file("downloads/small.bin").path)?.count == 200_000)
            let shown = try await Self.aria2p(port, ["show"])
            #expect(shown.status == 0 && shown.output.contains(gid) && shown.output.contains("small.bin"))

            origin.setFaults { $0.bytesPerSecond = 500_000 }
            let slowAdd = try await Self.aria2p(port, ["add", slow.absoluteString])
            let slowGID = try #require(slowAdd.output.split(separator: " ").last.map { String($0.prefix(16)) })
            try await Self.waitFor(port, slowGID, "active")
            #expect(try await Self.aria2p(port, ["pause", slowGID]).status == 0)
            try await Self.waitFor(port, slowGID, "paused")
            #expect(try await Self.aria2p(port, ["resume", slowGID]).status == 0)
            try await Self.waitFor(port, slowGID, "active")
            #expect(try await Self.aria2p(port, ["remove", slowGID]).status == 0)
            let version = try await Self.aria2p(port, ["call", "getversion"])
            #expect(version.output.contains("1.37.0"))
            #expect(try await Self.aria2p(port, ["purge"]).status == 0)
            let stopped = try await Self.aria2p(port, ["call", "tellstopped", "-J", "[0, 10]"])
            #expect(stopped.output.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(stopped.output)")

            daemon.send(SIGTERM)
            #expect(try await daemon.wait(timeout: .seconds(30)) == 0, "SIGTERM ends haul serve cleanly")
            await origin.stop()
        }

        @Test("aria2p's library reads every download, in every state, without a KeyError")
        func library() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let (daemon, port) = try await Self.serve(directory)
            let done = origin.serve("/done.bin", size: 100_000)
            let missing = origin.url("/missing.bin")
            let waiting = origin.serve("/waiting.bin", size: 100_000)
            _ = try await Self.aria2p(port, ["add", done.absoluteString])
            _ = try await Self.aria2p(port, ["add", missing.absoluteString])
            _ = try await Self.aria2p(
                port, ["call", "adduri", "-J", "[[\"\(waiting.absoluteString)\"], {\"pause\": \"true\"}]"])
            try await Task.sleep(for: .seconds(1))
            let script = """
                import aria2p, sys
                api = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=\(port), secret="\(Self.secret)"))
                downloads = api.get_downloads()
                for d in downloads:
                    values = [d.gid, d.name, d.status, d.total_length, d.completed_length, d.upload_length,
                              d.download_speed, d.upload_speed, d.connections, d.num_seeders, d.piece_length,
                              d.num_pieces, d.error_code, d.error_message, d.dir, d.progress, d.eta, d.bitfield,
                              d.info_hash, d.is_torrent, d.followed_by, d.following, d.belongs_to,
                              d.root_files_paths, d.verified_length, [(f.index, f.path, f.length,
                              f.completed_length, f.selected, f.uris) for f in d.files], d.options.dir]
                    print(d.gid, d.status, d.name)
                stats = api.get_stats()
                print("stats", stats.num_active, stats.num_waiting, stats.num_stopped, stats.download_speed)
                print("count", len(downloads))
                """
            let python = URL(fileURLWithPath: Aria2p.executable ?? "").deletingLastPathComponent()
                .appendingPathComponent("python")
            let child = try ChildProcess(executable: python, arguments: ["-c", script])
            let status = try await child.wait(timeout: .seconds(60))
            #expect(status == 0, "\(child.standardError)")
            let output = child.standardOutput
            #expect(output.contains("count 3"), "\(output)")
            #expect(output.contains(" complete done.bin"))
            #expect(output.contains(" error "))
            #expect(output.contains(" paused "))
            daemon.send(SIGTERM)
            _ = try await daemon.wait(timeout: .seconds(30))
            await origin.stop()
        }

        @Test("one queue: 'haul add' in a terminal reaches the daemon within a second, and addUri reaches 'haul list'")
        func sharedQueue() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let (daemon, port) = try await Self.serve(directory)
            let fromTerminal = origin.serve("/terminal.bin", size: 50_000)
            let added = try await ChildProcess.run(
                "haul",
                [
                    "add", fromTerminal.absoluteString, "-d", directory.file("downloads").path, "--state-dir",
                    directory.file("state").path,
                ])
            #expect(added.status == 0, "\(added.error)")
            let id = try #require(
                Int(added.output.drop { $0 == "#" }.prefix { $0.isNumber }))
            let gid = String(repeating: "0", count: 16 - String(id, radix: 16).count) + String(id, radix: 16)
            let start = ContinuousClock.now
            // Picked up when the daemon asks the origin for the file: seen here, in this process, not through aria2p,
            // whose every poll starts a Python process (a CI rehearsal's loaded machine took 5.08 s to see it done).
            while origin.requests(to: "/terminal.bin").isEmpty, start.duration(to: .now) < .seconds(30) {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(start.duration(to: .now) < .seconds(5), "picked up at the daemon's next look (every second)")
            try await Self.waitFor(port, gid, "complete")

            let fromRPC = origin.serve("/rpc.bin", size: 50_000)
            _ = try await Self.aria2p(
                port, ["call", "adduri", "-J", "[[\"\(fromRPC.absoluteString)\"], {\"pause\": \"true\"}]"])
            let listed = try await ChildProcess.run("haul", ["list", "--state-dir", directory.file("state").path])
            #expect(
                listed.output.contains("rpc.bin") || listed.output.contains(fromRPC.absoluteString), "\(listed.output)")
            daemon.send(SIGTERM)
            _ = try await daemon.wait(timeout: .seconds(30))
            await origin.stop()
        }

        static func waitFor(_ port: Int, _ gid: String, _ status: String) async throws {
            let start = ContinuousClock.now
            while start.duration(to: .now) < .seconds(30) {
                let answer = try await aria2p(port, ["call", "tellstatus", "-J", "[\"\(gid)\", [\"status\"]]"])
                if answer.output.contains("\"\(status)\"") { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("\(gid) did not become \(status)")
        }
    }
}

/// Where the tests find aria2p: `.build/python-venv` (made by `.ci/run`), or `$HAUL_ARIA2P`.
enum Aria2p {
    static let executable: String? = {
        if let given = ProcessInfo.processInfo.environment["HAUL_ARIA2P"], !given.isEmpty { return given }
        let local = FileManager.default.currentDirectoryPath + "/.build/python-venv/bin/aria2p"
        return FileManager.default.isExecutableFile(atPath: local) ? local : nil
    }()
}
