import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// `haul` against a real nginx (started by the test, with its own configuration), the server people really download
    /// from: multi-connection ranges, resume with `If-Range`, and nginx refusing a stale `If-Range`.
    @Suite(
        "haul against nginx",
        .enabled(if: NginxServer.executable != nil, "nginx is not installed (.ci/run installs it)"))
    struct NginxTests {
        static let size = 24 * 1024 * 1024 + 4321

        static func publish(
            _ name: String, in server: NginxServer, version: Int = 0, modified: Date? = nil
        ) async throws {
            let file = server.root.appendingPathComponent(name)
            try await blocking {
                try Data(TestContent.bytes(0..<size, version: version)).write(to: file)
                if let modified {
                    try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file.path)
                }
            }
        }

        @Test("-x 4 fetches a large file over four range requests, byte-exact")
        func multiConnection() async throws {
            let server = try await NginxServer.start()
            try await Self.publish("big.bin", in: server)
            let directory = TemporaryDirectory()
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "-x", "4", "-d", directory.path, "--state-dir", directory.file("state").path,
                    server.url("/big.bin").absoluteString,
                ])
            #expect(result.status == 0, "\(result.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("big.bin")), size: Self.size) == nil)
            let requests = server.log.filter { $0.path == "/big.bin" }
            #expect(requests.filter { $0.status == 206 }.count >= 4, "\(requests)")
            #expect(requests.allSatisfy { $0.status == 206 || $0.status == 200 })
            // Requests are bounded and a split takes only what no request covers (these parts are too small to cut): every
            // byte is sent once, plus the response headers.
            let sent = requests.reduce(0) { $0 + $1.bytesSent }
            print("nginx sent \(sent) bytes for a \(Self.size)-byte file over \(requests.count) requests")
            #expect(
                sent - Self.size <= requests.count * 1024, "\(requests.map { "\($0.range ?? "-") \($0.bytesSent)" })")
            await server.stop()
        }

        @Test("Ctrl-C, then the same command resumes with Range and If-Range, and nginx answers 206")
        func resume() async throws {
            let server = try await NginxServer.start(limitRate: "8m")
            try await Self.publish("resume.bin", in: server)
            let directory = TemporaryDirectory()
            let arguments = [
                "get", "-q", "-x", "1", "-d", directory.path, "--state-dir", directory.file("state").path,
                server.url("/slow/resume.bin").absoluteString,
            ]
            try await Self.interrupt(arguments, part: directory.file("resume.bin.part").path, atLeast: 4 * 1024 * 1024)

            let second = try await ChildProcess.run("haul", arguments)
            #expect(second.status == 0, "\(second.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("resume.bin")), size: Self.size) == nil)
            let requests = server.log.filter { $0.path == "/slow/resume.bin" }
            #expect(requests.count == 2, "\(requests)")
            let resumed = try #require(requests.last)
            #expect(resumed.status == 206)
            #expect(resumed.range?.hasPrefix("bytes=") == true && resumed.range != "bytes=0-")
            #expect(resumed.ifRange?.hasPrefix("\"") == true, "the ETag nginx sent: \(resumed.ifRange ?? "none")")
            await server.stop()
        }

        @Test("the file changes on nginx between runs: the stale If-Range gets the whole new file, never a splice")
        func staleIfRange() async throws {
            let server = try await NginxServer.start(limitRate: "8m")
            try await Self.publish("changing.bin", in: server, modified: Date(timeIntervalSince1970: 1_700_000_000))
            let directory = TemporaryDirectory()
            let arguments = [
                "get", "-x", "1", "-d", directory.path, "--state-dir", directory.file("state").path,
                server.url("/slow/changing.bin").absoluteString,
            ]
            try await Self.interrupt(
                arguments, part: directory.file("changing.bin.part").path, atLeast: 4 * 1024 * 1024)

            try await Self.publish(
                "changing.bin", in: server, version: 1, modified: Date(timeIntervalSince1970: 1_700_003_600))
            let second = try await ChildProcess.run("haul", arguments)
            #expect(second.status == 0, "\(second.error)")
            #expect(second.error.contains("starting over"), "\(second.error)")
            let data = try #require(directory.contents("changing.bin"))
            #expect(TestContent.firstMismatch(data, size: Self.size, version: 1) == nil, "the new version, whole")
            let requests = server.log.filter { $0.path == "/slow/changing.bin" }
            let resumed = try #require(requests.dropFirst().first)
            #expect(resumed.ifRange != nil && resumed.range != nil)
            #expect(resumed.status == 200, "nginx ignored the range because If-Range no longer matched: \(requests)")
            await server.stop()
        }

        /// Runs `haul` until its part file holds `atLeast` bytes, then sends SIGINT; expects exit 130.
        static func interrupt(_ arguments: [String], part: String, atLeast bytes: Int) async throws {
            let first = try ChildProcess(product: "haul", arguments: arguments)
            if !(try await waitForFile(part, atLeast: bytes)) { Issue.record("no progress: \(first.standardError)") }
            first.send(SIGINT)
            #expect(try await first.wait() == 130, "\(first.standardError)")
            #expect(first.standardError.contains("run the same command again to resume"))
        }
    }
}
