import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// Issue 45 against the real `haul serve` binary: what it prints (items 9), what `--host` it takes (item 10), and
    /// a forged `Host` over a real socket (item 3).
    @Suite("haul serve under attack")
    struct ServeSecurityTests {
        /// Starts `haul serve` with `arguments` on a free port; returns the process and its port.
        static func serve(_ directory: TemporaryDirectory, _ arguments: [String]) async throws -> (ChildProcess, Int) {
            let child = try ChildProcess(
                product: "haul",
                arguments: [
                    "serve", "--port", "0", "-d", directory.file("downloads").path, "--state-dir",
                    directory.file("state").path,
                ] + arguments)
            return (child, try await ServeStartup.port(of: child, also: ["dashboard:"]))
        }

        @Test("the secret is not printed unless --print-secret: the output says where it is")
        func secretNotPrinted() async throws {
            let directory = TemporaryDirectory()
            let (generated, _) = try await Self.serve(directory, [])
            let secret = try String(contentsOf: directory.file("state/rpc-secret"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(secret.count == 48)
            #expect(!generated.standardOutput.contains(secret), "\(generated.standardOutput)")
            #expect(generated.standardOutput.contains(directory.file("state/rpc-secret").path))
            generated.send(SIGTERM)
            #expect(try await generated.wait(timeout: .seconds(30)) == 0)

            let secretFile = directory.file("given-secret")
            try Data("from-a-file-0123456789\n".utf8).write(to: secretFile)
            let (fromFile, _) = try await Self.serve(directory, ["--secret-file", secretFile.path])
            #expect(!fromFile.standardOutput.contains("from-a-file-0123456789"), "\(fromFile.standardOutput)")
            #expect(fromFile.standardOutput.contains(secretFile.path))
            fromFile.send(SIGTERM)
            _ = try await fromFile.wait(timeout: .seconds(30))

            let (printing, port) = try await Self.serve(directory, ["--print-secret"])
            #expect(printing.standardOutput.contains("http://127.0.0.1:\(port)/#secret=\(secret)"))
            printing.send(SIGTERM)
            _ = try await printing.wait(timeout: .seconds(30))
        }

        @Test("--host with a name that merely starts like a loopback address needs a secret")
        func loopbackLookalike() async throws {
            let directory = TemporaryDirectory()
            let result = try await ChildProcess.run(
                "haul",
                [
                    "serve", "--host", "127.0.0.1.attacker.example", "--port", "0", "-d",
                    directory.file("downloads").path, "--state-dir", directory.file("state").path,
                ], timeout: .seconds(30))
            #expect(result.status != 0)
            #expect(result.error.contains("lets other machines connect"), "\(result.error)")
        }

        @Test("a forged Host reaches nothing; the dashboard's own address and 127.0.0.1 do")
        func forgedHost() async throws {
            let directory = TemporaryDirectory()
            let (daemon, port) = try await Self.serve(directory, ["--secret", "e2e"])
            let request = { (host: String) in
                "GET /jsonrpc?method=system.listMethods&id=1 HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
            }
            for (host, status) in [
                ("rebind.attacker.example:\(port)", 421), ("127.0.0.1.attacker.example:\(port)", 421),
                ("127.0.0.1:\(port)", 200), ("localhost:\(port)", 200), ("[::1]:\(port)", 200),
            ] {
                let connection = try RawConnection(port: port)
                try await connection.send(request(host))
                let answer = try await connection.receive(timeout: .seconds(10), untilResponse: true)
                #expect(answer.status == status, "\(host): \(answer.text)")
            }
            daemon.send(SIGTERM)
            #expect(try await daemon.wait(timeout: .seconds(30)) == 0)
        }
    }
}
