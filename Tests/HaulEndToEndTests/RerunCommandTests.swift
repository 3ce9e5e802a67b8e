import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// What a `haul get` leaves when it is interrupted, and what running it again (with other options, a fresh
    /// signed URL, a new token) does with it.
    @Suite("haul get interrupted and run again")
    struct RerunCommandTests {
        static let size = 8 * 1024 * 1024 + 3

        /// The faults of each test's first run: 2 MiB/s, its one response stopping at 2 MiB (later ones are whole),
        /// so that a signal sent late on a busy machine still meets a download under way, never a finished one.
        static func slowFirstResponse(_ faults: inout TestOrigin.Faults) {
            faults.bytesPerSecond = 2 * 1024 * 1024
            faults.stallAfter = 2 << 20
            faults.stallTimes = 1
        }

        /// Starts `haul get arguments` and stops it with `signal` once its part file has `bytes`.
        static func interrupt(
            _ arguments: [String], at bytes: Int, partFile: String, with signal: Int32
        ) async throws {
            let child = try ChildProcess(product: "haul", arguments: arguments)
            if !(try await waitForFile(partFile, atLeast: bytes)) { Issue.record("no progress") }
            child.send(signal)
            _ = try await child.wait()
        }

        @Test(
            "interrupted by Ctrl-C or SIGKILL: listed interrupted with its command, never run by haul run; resume hands it over",
            arguments: [SIGINT, SIGKILL])
        func interruptedStaysPut(signal: Int32) async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/i.bin", size: Self.size)
            origin.setFaults(Self.slowFirstResponse)
            let directory = TemporaryDirectory()
            let state = directory.file("state").path
            let output = directory.file("i.bin").path
            try await Self.interrupt(
                ["get", "-q", "-x", "1", "--state-dir", state, "-o", output, url.absoluteString], at: 1 << 20,
                partFile: output + ".part", with: signal)
            let list = try await ChildProcess.run("haul", ["list", "--state-dir", state])
            #expect(list.output.contains("interrupted"), "\(list.output)")
            #expect(list.output.contains("haul get (pid"), "\(list.output)")
            origin.setFaults { $0.bytesPerSecond = nil }
            let requests = origin.requests(to: "/i.bin").count
            let run = try await ChildProcess.run("haul", ["run", "-q", "--state-dir", state])
            #expect(run.status == 0, "\(run.error)")
            #expect(origin.requests(to: "/i.bin").count == requests, "haul run fetched what the user left")
            let resumed = try await ChildProcess.run("haul", ["resume", "--all", "--state-dir", state])
            #expect(resumed.output.contains("#1 queued"), "\(resumed.output)")
            #expect(try await ChildProcess.run("haul", ["run", "-q", "--state-dir", state]).status == 0)
            let data = try #require(FileManager.default.contents(atPath: output))
            #expect(TestContent.firstMismatch([UInt8](data), size: Self.size) == nil)
            #expect(origin.requests(to: "/i.bin").last?.range?.hasPrefix("bytes=0-") == false, "resumed, not restarted")
            await origin.stop()
        }

        @Test("the same URL again with -o naming where it already writes continues it; nothing is left to run later")
        func otherSpellingOfTheSameFile() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/big.bin", size: Self.size)
            origin.setFaults(Self.slowFirstResponse)
            let directory = TemporaryDirectory()
            let state = directory.file("state").path
            try await Self.interrupt(
                ["get", "-q", "-x", "1", "--state-dir", state, "-d", directory.path, url.absoluteString], at: 1 << 20,
                partFile: directory.file("big.bin.part").path, with: SIGINT)
            origin.setFaults { $0.bytesPerSecond = nil }
            let rerun = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "-x", "1", "--state-dir", state, "-o", directory.file("big.bin").path,
                    url.absoluteString,
                ])
            #expect(rerun.status == 0, "\(rerun.error)")
            #expect(origin.requests(to: "/big.bin").last?.range?.hasPrefix("bytes=0-") == false, "resumed")
            let list = try await ChildProcess.run("haul", ["list", "--state-dir", state])
            #expect(list.output.split(separator: "\n").count == 2, "one download: \(list.output)")
            let requests = origin.requests(to: "/big.bin").count
            _ = try await ChildProcess.run("haul", ["resume", "--all", "--state-dir", state])
            #expect(try await ChildProcess.run("haul", ["run", "-q", "--state-dir", state]).status == 0)
            #expect(origin.requests(to: "/big.bin").count == requests, "nothing fetched again later")
            let data = try #require(directory.contents("big.bin"))
            #expect(TestContent.firstMismatch(data, size: Self.size) == nil)
            #expect(directory.entries().filter { $0.hasPrefix("big") } == ["big.bin"])
            await origin.stop()
        }

        @Test("a freshly signed URL resumes into the same part file; a new token replaces the old one for good")
        func signedURLAndNewToken() async throws {
            let origin = try await TestOrigin.start()
            origin.serve("/s.bin", size: Self.size)
            origin.setFaults(Self.slowFirstResponse)
            let directory = TemporaryDirectory()
            let state = directory.file("state").path
            let first = origin.url("/s.bin?X-Amz-Signature=aaa&X-Amz-Expires=60&part=1").absoluteString
            try await Self.interrupt(
                [
                    "get", "-q", "-x", "1", "--state-dir", state, "-d", directory.path, "-H",
                    "Authorization: Bearer old", first,
                ],
                at: 1 << 20, partFile: directory.file("s.bin.part").path, with: SIGINT)
            origin.setFaults { $0.bytesPerSecond = nil }
            let before = origin.requests(to: "/s.bin").count
            let second = origin.url("/s.bin?X-Amz-Signature=bbb&X-Amz-Expires=60&part=1").absoluteString
            let rerun = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "-x", "1", "--state-dir", state, "-d", directory.path, "-H",
                    "Authorization: Bearer new", second,
                ])
            #expect(rerun.status == 0, "\(rerun.error)")
            #expect(directory.entries().filter { $0.hasPrefix("s") } == ["s.bin", "state"], "no s (1).bin")
            let later = origin.requests(to: "/s.bin").dropFirst(before)
            #expect(!later.isEmpty)
            #expect(later.allSatisfy { $0.header("Authorization") == "Bearer new" && $0.target.contains("bbb") })
            #expect(later.first?.range?.hasPrefix("bytes=0-") == false, "resumed")
            let data = try #require(directory.contents("s.bin"))
            #expect(TestContent.firstMismatch(data, size: Self.size) == nil)
            await origin.stop()
        }

        @Test("a refused port fails in seconds (exit 6) naming the flag that keeps trying; with it, haul get waits")
        func refusedFailsFast() async throws {
            let directory = TemporaryDirectory()
            let url = "http://127.0.0.1:1/x.bin"  // nothing listens: refused
            let started = ContinuousClock.now
            let result = try await ChildProcess.run(
                "haul", ["get", "--state-dir", directory.file("state").path, "-d", directory.path, url])
            let took = started.duration(to: .now)
            #expect(result.status == 6, "\(result.error)")
            // Three tries 1 s and 2 s apart, and a process started under the suite's load; without the first
            // contact's limit it would keep trying for --retry-max-time (90 s).
            #expect(took < .seconds(15), "took \(took)")
            #expect(result.error.contains("--retry-connrefused"), "\(result.error)")
            #expect(!result.error.contains("retries and resumes on its own"), "\(result.error)")
            let patient = try ChildProcess(
                product: "haul",
                arguments: [
                    "get", "--retry-connrefused", "--state-dir", directory.file("p").path, "-d", directory.path, url,
                ])
            try await Task.sleep(for: .seconds(5))
            #expect(patient.process.isRunning, "--retry-connrefused keeps trying")
            patient.send(SIGINT)
            #expect(try await patient.wait() == 130)
        }
    }
}
