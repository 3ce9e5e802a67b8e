import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// `Examples/DownloadList`, the app-shaped example over `DownloadListModel`: killed with SIGKILL mid-download, run
    /// again on the same state, it shows the same list and finishes the file, byte-exact, resuming.
    @Suite(
        "The DownloadList example",
        .enabled(if: NginxServer.executable != nil, "nginx is not installed (.ci/run installs it)"))
    struct DownloadListExampleTests {
        @Test("SIGKILL mid-download, then a second run continues the same row to completion with a range request")
        func survivesSIGKILL() async throws {
            let server = try await NginxServer.start(limitRate: "4m")
            let size = 16 * 1024 * 1024 + 77
            try await blocking {
                try Data(TestContent.bytes(0..<size)).write(to: server.root.appendingPathComponent("episode.bin"))
            }
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path, "-d", directory.path]
            let first = try ChildProcess(
                product: "DownloadList", arguments: state + [server.url("/slow/episode.bin").absoluteString])
            let grew = try await waitForFile(directory.file("episode.bin.part").path, atLeast: 2 * 1024 * 1024)
            #expect(grew, "\(first.standardOutput) \(first.standardError)")
            first.send(SIGKILL)
            #expect(try await first.wait() == SIGKILL + 128 || first.process.terminationReason == .uncaughtSignal)
            #expect(first.standardOutput.contains("#1 episode.bin running"), "\(first.standardOutput)")

            // No URL this time: the list comes from the state directory, as an app's after it was killed.
            let second = try await ChildProcess.run("DownloadList", state, timeout: .seconds(60))
            #expect(second.status == 0, "\(second.error)")
            #expect(second.output.contains("completed"), "\(second.output)")
            #expect(second.output.contains("episode.bin"))
            let data = try #require(directory.contents("episode.bin"))
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            let requests = server.log.filter { $0.path == "/slow/episode.bin" }
            #expect(requests.count == 2, "\(requests)")
            #expect(requests.last?.status == 206 && requests.last?.range != "bytes=0-", "\(requests)")
            await server.stop()
        }

        @Test("commands on standard input: pause, resume, delete, and a usage message for anything else")
        func commands() async throws {
            let server = try await NginxServer.start(limitRate: "1m")
            try await blocking {
                try Data(TestContent.bytes(0..<300_000)).write(to: server.root.appendingPathComponent("a.bin"))
                try Data(TestContent.bytes(0..<3_000_001)).write(to: server.root.appendingPathComponent("b.bin"))
            }
            let directory = TemporaryDirectory()
            let input = """
                pause 1
                resume 1
                delete 2
                frobnicate

                """
            let result = try await ChildProcess.run(
                "DownloadList",
                [
                    "--state-dir", directory.file("state").path, "-d", directory.path,
                    server.url("/a.bin").absoluteString,
                    server.url("/slow/b.bin").absoluteString,
                ],
                standardInput: input, timeout: .seconds(60))
            #expect(result.status == 0, "\(result.error)")
            #expect(result.error.contains("commands: add URL, pause ID, resume ID, delete ID, quit"))
            #expect(directory.contents("a.bin")?.count == 300_000)
            #expect(!FileManager.default.fileExists(atPath: directory.file("b.bin").path))
            #expect(!result.output.contains("b.bin completed"), "\(result.output)")
            await server.stop()
        }
    }
}
