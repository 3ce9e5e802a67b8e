import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// The installed `haul`: `tools/install --prefix DIR` (the release build, linked with the Swift runtime), then that
    /// binary run by `env -i` (no toolchain on `PATH` or `LD_LIBRARY_PATH`) downloads from nginx byte-exact; its manual
    /// renders; `--uninstall` leaves the prefix empty. And the Debian package `tools/package-deb` made (`$HAUL_DEB`),
    /// unpacked with `dpkg -x`, does the same.
    ///
    /// The release build takes long on a small machine: these run when it exists (`.ci/run` makes it first, with
    /// `tools/build-release`) and skip with a message otherwise; `HAUL_REQUIRE_RELEASE=1` (set by `.ci/run`) makes a
    /// missing one a failure instead.
    @Suite(
        "The installed haul",
        .enabled(if: NginxServer.executable != nil, "nginx is not installed (.ci/run installs it)"))
    struct InstallTests {
        static let environment = ProcessInfo.processInfo.environment
        static let releaseRequired = environment["HAUL_REQUIRE_RELEASE"] == "1"
        static let releaseBuilt = FileManager.default.isExecutableFile(
            atPath: PackageRoot.file(".build-release/stage/bin/haul").path)

        @Test(
            "tools/install --prefix DIR: bin/haul under env -i downloads byte-exact; man -l renders; --uninstall empties DIR",
            .enabled(
                if: releaseBuilt || releaseRequired,
                "no release build here: run tools/build-release (long) to run this test (.ci/run does)"))
        func installThenUninstall() async throws {
            let prefix = TemporaryDirectory()
            let install = try await Self.run(PackageRoot.file("tools/install"), ["--prefix", prefix.path])
            #expect(install.status == 0, "\(install.error)")
            let haul = prefix.file("bin/haul")
            let installed = try Self.files(below: prefix.url)
            #expect(
                installed == [
                    "bin/haul", "share/bash-completion/completions/haul", "share/fish/vendor_completions.d/haul.fish",
                    "share/haul/haul.service", "share/haul/install-manifest", "share/man/man1/haul.1",
                    "share/zsh/site-functions/_haul",
                ], "\(installed)")
            try await Self.expectSelfContained(haul)
            try await Self.expectDownloads(with: haul)

            // The manual renders (man-db and groff, as a reader would), and names the commands.
            let manual = try await Self.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["MANPAGER=cat", "MANWIDTH=100", "man", "-l", prefix.file("share/man/man1/haul.1").path])
            #expect(manual.status == 0, "\(manual.error)")
            #expect(manual.output.contains("haul get") && manual.output.contains("haul serve"), "\(manual.output)")
            #expect(!manual.error.contains("warning"), "\(manual.error)")
            let bash = try String(contentsOf: prefix.file("share/bash-completion/completions/haul"), encoding: .utf8)
            #expect(bash.contains("complete") && bash.contains("haul"))
            #expect(
                try String(contentsOf: prefix.file("share/zsh/site-functions/_haul"), encoding: .utf8).hasPrefix(
                    "#compdef haul"))
            let unit = try String(contentsOf: prefix.file("share/haul/haul.service"), encoding: .utf8)
            #expect(unit.contains("ExecStart=\(haul.path) serve"), "\(unit)")

            // Again: the same files, nothing added; then --uninstall removes them and the directories it made.
            let again = try await Self.run(PackageRoot.file("tools/install"), ["--prefix", prefix.path])
            #expect(again.status == 0, "\(again.error)")
            #expect(try Self.files(below: prefix.url) == installed)
            let uninstall = try await Self.run(
                PackageRoot.file("tools/install"), ["--prefix", prefix.path, "--uninstall"])
            #expect(uninstall.status == 0, "\(uninstall.error)")
            let left = try FileManager.default.contentsOfDirectory(atPath: prefix.path)
            #expect(left.isEmpty, "left in the prefix: \(left)")
            #expect(FileManager.default.fileExists(atPath: prefix.path), "the prefix itself was there before")
        }

        @Test(
            "the Debian package, unpacked with dpkg -x: --version, and a download under env -i",
            .enabled(
                if: environment["HAUL_DEB"] != nil || releaseRequired,
                "HAUL_DEB names no package here: .ci/run builds one with tools/package-deb"))
        func debianPackage() async throws {
            let deb = try #require(Self.environment["HAUL_DEB"], "HAUL_DEB, set by .ci/run")
            let root = TemporaryDirectory()
            let unpack = try await Self.run(URL(fileURLWithPath: "/usr/bin/dpkg"), ["-x", deb, root.path])
            #expect(unpack.status == 0, "\(unpack.error)")
            let fields = try await Self.run(URL(fileURLWithPath: "/usr/bin/dpkg-deb"), ["--field", deb, "Depends"])
            #expect(!fields.output.isEmpty && !fields.output.lowercased().contains("swift"), "\(fields.output)")
            let haul = root.file("usr/bin/haul")
            for path in [
                "usr/share/man/man1/haul.1.gz", "usr/share/bash-completion/completions/haul",
                "usr/lib/systemd/user/haul.service",
            ] {
                #expect(FileManager.default.fileExists(atPath: root.file(path).path), "\(path)")
            }
            let version = try await Self.run(URL(fileURLWithPath: "/usr/bin/env"), ["-i", haul.path, "--version"])
            #expect(version.status == 0, "\(version.error)")
            #expect(version.output.contains("commit ") && version.output.contains("built "), "\(version.output)")
            try await Self.expectSelfContained(haul)
            try await Self.expectDownloads(with: haul)
        }

        /// `ldd` finds no Swift runtime library among what `binary` loads; `--version` names its commit and date.
        static func expectSelfContained(_ binary: URL) async throws {
            let ldd = try await run(URL(fileURLWithPath: "/usr/bin/ldd"), [binary.path])
            #expect(ldd.status == 0, "\(ldd.error)")
            for library in ["libswift", "libFoundation", "lib_Foundation", "libdispatch"] {
                #expect(!ldd.output.contains(library), "\(ldd.output)")
            }
            let version = try await run(binary, ["--version"])
            // `haul 0.1.0 (commit 0123456789ab, built 2026-11-27T12:00:00Z)`
            #expect(
                version.output.range(
                    of: #"\(commit [0-9a-f]{12}(-dirty)?, built 20\d\d-\d\d-\d\dT"#, options: .regularExpression)
                    != nil, "\(version.output)")
        }

        /// `binary get` run with `env -i` (nothing of the toolchain's environment) from another directory fetches a
        /// file from a private nginx over four connections, byte-exact, with its tasks on the event loops.
        static func expectDownloads(with binary: URL) async throws {
            let server = try await NginxServer.start()
            let size = 5 * 1024 * 1024 + 17
            try await blocking {
                try Data(TestContent.bytes(0..<size)).write(to: server.root.appendingPathComponent("installed.bin"))
            }
            let directory = TemporaryDirectory()
            let result = try await run(
                URL(fileURLWithPath: "/usr/bin/env"),
                [
                    "-i", "HOME=\(directory.path)", binary.path, "get", "-v", "-x", "4", "-d", directory.path,
                    "--state-dir", directory.file("state").path, server.url("/installed.bin").absoluteString,
                ], currentDirectory: directory.url)
            #expect(result.status == 0, "\(result.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("installed.bin")), size: size) == nil)
            // Its runtime linked in, the release build still finds Swift Concurrency's hook (HaulConcurrencyHook): its
            // tasks run on the HTTP client's event loops, as `swift build`'s do (`TaskPlacement`).
            #expect(result.error.contains("tasks run on the HTTP client's event loops"), "\(result.error)")
            await server.stop()
        }

        /// Runs `executable` to its end (an install may build for long).
        static func run(
            _ executable: URL, _ arguments: [String], currentDirectory: URL? = nil
        ) async throws -> (status: Int32, output: String, error: String) {
            let child = try ChildProcess(
                executable: executable, arguments: arguments, currentDirectory: currentDirectory ?? PackageRoot.url)
            let status = try await child.wait(timeout: .seconds(3600))
            return (status, child.standardOutput, child.standardError)
        }

        /// The files below `directory`, by their paths from it, sorted.
        static func files(below directory: URL) throws -> [String] {
            let base = directory.standardizedFileURL.path
            let enumerator = FileManager.default.enumerator(atPath: base)
            var files: [String] = []
            while let path = enumerator?.nextObject() as? String {
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: base + "/" + path, isDirectory: &isDirectory)
                if !isDirectory.boolValue { files.append(path) }
            }
            return files.sorted()
        }
    }
}
