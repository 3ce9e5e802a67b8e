import Foundation
import HaulServer
import HaulTestSupport
import Testing

@testable import haul

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// `haul serve` where it cannot listen: one line saying why and what to do, and exit 69 (`EX_UNAVAILABLE`),
    /// not the disk error's 4.
    @Suite("haul serve on an address it cannot listen on")
    struct ServeListenCommandTests {
        /// `haul serve` on a free port, until it prints where it listens; returns the process and its port.
        static func serve(_ directory: TemporaryDirectory) async throws -> (ChildProcess, Int) {
            let child = try ChildProcess(
                product: "haul",
                arguments: [
                    "serve", "--port", "0", "-d", directory.file("downloads").path, "--state-dir",
                    directory.file("state").path,
                ])
            return (child, try await ServeStartup.port(of: child))
        }

        @Test("a second haul serve on the same port: one line naming the address and the fix, exit 69")
        func portInUse() async throws {
            let first = TemporaryDirectory()
            let (daemon, port) = try await Self.serve(first)
            let second = TemporaryDirectory()
            let result = try await ChildProcess.run(
                "haul",
                [
                    "serve", "--port", String(port), "-d", second.file("downloads").path, "--state-dir",
                    second.file("state").path,
                ], timeout: .seconds(30))
            #expect(result.status == 69, "exit \(result.status): \(result.error)")
            #expect(
                result.error
                    == "haul: cannot listen on 127.0.0.1:\(port): the address is in use (another haul serve or "
                    + "aria2c?): stop it or use --port\n")
            #expect(result.output.isEmpty, "no start-up line: \(result.output)")
            #expect(daemon.process.isRunning, "the first one is untouched")
            daemon.send(SIGTERM)
            #expect(try await daemon.wait(timeout: .seconds(30)) == 0)
        }

        @Test("a port below 1024 without the privilege: permission denied, exit 69")
        func privilegedPort() async throws {
            // As root, the privilege is dropped from the child (setpriv); as another user, it never had it.
            let setpriv = "/usr/bin/setpriv"
            let haul = try ChildProcess.locate("haul").path
            let directory = TemporaryDirectory()
            let serve = [
                "serve", "--port", "1", "-d", directory.file("downloads").path, "--state-dir",
                directory.file("state").path,
            ]
            let child: ChildProcess
            if getuid() == 0 {
                try #require(FileManager.default.isExecutableFile(atPath: setpriv), "util-linux setpriv is needed")
                child = try ChildProcess(
                    executable: URL(fileURLWithPath: setpriv),
                    arguments: ["--bounding-set", "-net_bind_service", haul] + serve)
            } else {
                child = try ChildProcess(executable: URL(fileURLWithPath: haul), arguments: serve)
            }
            #expect(try await child.wait(timeout: .seconds(30)) == 69, "\(child.standardError)")
            #expect(
                child.standardError
                    == "haul: cannot listen on 127.0.0.1:1: permission denied (ports below 1024 need root or "
                    + "CAP_NET_BIND_SERVICE): use --port 1024 or above\n")
        }

        @Test("the line for each reason", arguments: [EADDRINUSE, EACCES, EADDRNOTAVAIL, EMFILE])
        func messages(errno: Int32) {
            let line = Serve.message(for: HaulDaemon.ListenError(host: "::1", port: 6800, errno: errno))
            #expect(line.hasPrefix("cannot listen on [::1]:6800: "), "\(line)")
            let expected =
                switch errno {
                case EADDRINUSE: "in use"
                case EACCES: "permission denied"
                case EADDRNOTAVAIL: "check --host"
                default: String(cString: strerror(errno))
                }
            #expect(line.contains(expected), "\(line)")
        }
    }
}
