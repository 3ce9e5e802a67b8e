import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// Issue 11 through the `haul` binary: the failure scenarios with their exit status and time, a crash at the worst
    /// moment, two processes on one download or one file, and what the command line shows and accepts.
    @Suite("haul under adversity")
    struct FailurePolicyCommandTests {
        /// The bounds used here: short, so each scenario takes seconds (the defaults are 90 s, 1 KiB/s over 30 s).
        /// `HAUL_POLICY_DEFAULTS=1` runs them with the defaults instead, to measure what users get.
        private static let bounds: [String] =
            ProcessInfo.processInfo.environment["HAUL_POLICY_DEFAULTS"] == "1"
            ? [] : ["--retry-max-time", "6", "--timeout", "2", "--lowest-speed-time", "3"]

        private static func get(
            _ url: URL, connections: Int, in directory: TemporaryDirectory
        ) async throws
            -> (status: Int32, error: String, seconds: Double)
        {
            let start = ContinuousClock.now
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "-x", String(connections), "--state-dir", directory.file("state").path, "-d",
                    directory.path,
                    url.absoluteString,
                ] + bounds,
                timeout: .seconds(600))
            return (result.status, result.error, start.duration(to: .now).seconds)
        }

        enum Scenario: String, CaseIterable, Sendable {
            case serverErrorForever = "500 forever"
            case stallAt30Percent = "stall at 30%"
            case trickle = "128 B/s after 20%"
            case cutEvery16To96KiB = "cut after 16-96 KiB"
            case rotatingETag = "new ETag every response"
        }

        @Test(
            "haul get against each bad server: bounded, with the expected exit status",
            arguments: Scenario.allCases, [1, 4])
        func scenario(_ scenario: Scenario, connections: Int) async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let size = scenario == .trickle ? 4 * 1024 * 1024 : 2 * 1024 * 1024
            let url = origin.serve("/s.bin", size: size)
            switch scenario {
            case .serverErrorForever: origin.respond("/s.bin", status: 500)
            case .stallAt30Percent: origin.setFaults { $0.stallAtByte = size * 3 / 10 }
            case .trickle:
                origin.setFaults {
                    $0.trickle = (after: size / 5, bytesPerSecond: 128)
                    $0.trickleTimes = 1
                }
            case .cutEvery16To96KiB: origin.setFaults { $0.cutEachWithin = 16 * 1024...96 * 1024 }
            case .rotatingETag:
                origin.setFaults {
                    $0.rotatesValidators = true
                    $0.cutAfter = size * 4 / 10
                    $0.cutTimes = 1
                }
            }
            let result = try await Self.get(url, connections: connections, in: directory)
            let requests = origin.requests(to: "/s.bin").count
            print(
                "haul get -x \(connections), \(scenario.rawValue): exit \(result.status) after",
                String(format: "%.1f s,", result.seconds), "\(requests) requests,",
                "\(origin.bodyBytesSent(to: "/s.bin")) body bytes; \(result.error.split(separator: "\n").last ?? "")")
            // A cut after new bytes is retried after ~1 s (backoff restarts with progress): ~40 cuts take ~30 s alone.
            let limit = Self.bounds.isEmpty ? 150.0 : (scenario == .cutEvery16To96KiB ? 60 : 30)
            #expect(result.seconds < limit)
            switch scenario {
            case .serverErrorForever, .stallAt30Percent:
                // An HTTP error (8) or a network failure (6), by the documented exit statuses.
                #expect(result.status == (scenario == .serverErrorForever ? 8 : 6), "\(result.error)")
                #expect(result.error.contains("no new data for"), "\(result.error)")
            case .trickle, .cutEvery16To96KiB, .rotatingETag:
                #expect(result.status == 0, "\(result.error)")
                let data = try #require(FileManager.default.contents(atPath: directory.file("s.bin").path))
                #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
                #expect(requests < 200, "\(requests) requests")
            }
            await origin.stop()
        }

        @Test("SIGKILL right after the part file was preallocated: the next run trusts only the recorded plan")
        func crashAfterPreallocation() async throws {
            let origin = try await TestOrigin.start()
            let size = 8 * 1024 * 1024 + 3
            var resource = TestOrigin.Resource(size: size)
            // A zero tail (like a disk image's): the overlap check alone cannot tell it from a preallocated file.
            resource.zeroTail = 3 * 1024 * 1024
            let url = origin.serve("/image.bin", resource)
            let directory = TemporaryDirectory()
            let output = directory.file("image.bin").path
            let arguments = [
                "get", "-q", "-x", "4", "--state-dir", directory.file("state").path, "-o", output, url.absoluteString,
            ]
            let first = try ChildProcess(
                product: "haul", arguments: arguments, environment: ["HAUL_CRASH_POINT": "after-preallocation"])
            _ = try await first.wait()
            #expect(first.process.terminationReason == .uncaughtSignal, "it did not reach the crash point")
            let part = try FileManager.default.attributesOfItem(atPath: output + ".part")[.size] as? Int
            #expect(part == size, "the part file was preallocated")

            let second = try ChildProcess(product: "haul", arguments: arguments)
            #expect(try await second.wait() == 0, "\(second.standardError)")
            let data = try #require(FileManager.default.contents(atPath: output))
            var expected = TestContent.bytes(0..<size)
            for index in (size - resource.zeroTail)..<size { expected[index] = 0 }
            #expect(data == Data(expected), "the download completed with wrong bytes")
            await origin.stop()
        }

        @Test("haul get waiting for a download that haul run holds takes it over when haul run is killed")
        func getTakesOverFromKilledRun() async throws {
            let origin = try await TestOrigin.start()
            let size = 6 * 1024 * 1024
            let url = origin.serve("/held.bin", size: size)
            // haul run's response stops at half the file (haul get's are whole): a kill that comes late still meets
            // a download under way, never a finished one.
            origin.holdFirstResponse(at: size / 2)
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path]
            let added = try await ChildProcess.run(
                "haul", ["add", "-x", "1", "-d", directory.path, url.absoluteString] + state)
            #expect(added.status == 0, "\(added.error)")
            let runner = try ChildProcess(product: "haul", arguments: ["run", "-q"] + state)
            try await waitForFile(directory.file("held.bin.part").path, atLeast: 512 * 1024)
            let getter = try ChildProcess(
                product: "haul", arguments: ["get", "-q", "-x", "1", "-d", directory.path, url.absoluteString] + state)
            try await Task.sleep(for: .seconds(1.5))
            runner.send(SIGKILL)
            _ = try await runner.wait()
            origin.setFaults { $0.bytesPerSecond = nil }
            #expect(try await getter.wait(timeout: .seconds(30)) == 0, "\(getter.standardError)")
            let data = try #require(FileManager.default.contents(atPath: directory.file("held.bin").path))
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            await origin.stop()
        }

        @Test("two haul processes with separate state never write one file: the second is refused")
        func twoProcessesOneFile() async throws {
            let origin = try await TestOrigin.start()
            let size = 4 * 1024 * 1024
            let url = origin.serve("/one.bin", size: size)
            // Every response stops at 1 MiB and closes a second later, retries too, until the second process was
            // refused: one that starts late on a busy machine still finds the first writing, never finished.
            origin.setFaults {
                $0.bytesPerSecond = 2 * 1024 * 1024
                $0.stallAtByte = size / 4
                $0.stallDuration = .seconds(1)
            }
            let directory = TemporaryDirectory()
            let output = directory.file("one.bin").path
            let first = try ChildProcess(
                product: "haul",
                arguments: ["get", "-q", "--state-dir", directory.file("a").path, "-o", output, url.absoluteString])
            try await waitForFile(output + ".part", atLeast: 256 * 1024)
            let second = try await ChildProcess.run(
                "haul", ["get", "-q", "--state-dir", directory.file("b").path, "-o", output, url.absoluteString])
            #expect(second.status != 0)
            #expect(second.error.contains("already being written"), "\(second.error)")
            origin.setFaults {
                $0.bytesPerSecond = nil
                $0.stallAtByte = nil
            }
            #expect(try await first.wait() == 0, "\(first.standardError)")
            let data = try #require(FileManager.default.contents(atPath: output))
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            await origin.stop()
        }

        @Test("a list for a host that refuses every connection ends once the host has refused for the time bound")
        func listForHostThatIsDown() async throws {
            let directory = TemporaryDirectory()
            // 40 files, 4 at a time, 2 s each without the host gate: 20 s; with it, about 2 s.
            let list = (0..<40).map { "http://127.0.0.1:1/f\($0).bin" }.joined(separator: "\n")
            let result = try await ChildProcess.run(
                "haul",
                [
                    // Patient: a host that refuses on first contact would otherwise fail in three tries.
                    "get", "-q", "-j", "4", "--retry-connrefused", "--retries", "1000", "--retry-max-time", "2", "-i",
                    "-", "-d",
                    directory.path, "--state-dir", directory.file("state").path,
                ],
                standardInput: list)
            #expect(result.status == 6, "\(result.error)")
            let lines = result.error.split(separator: "\n")
            let together = lines.filter { $0.contains("every request to 127.0.0.1:1 failed for 2 s") }
            #expect(together.count >= 30, "\(result.error)")
            #expect(together.allSatisfy { $0.contains("connection refused") && $0.contains("then resume") })
            // Each line says which download it is about: its id and URL.
            for index in [0, 17, 39] {
                let url = "http://127.0.0.1:1/f\(index).bin"
                #expect(lines.contains { $0.hasPrefix("haul: #\(index + 1) \(url): ") }, "\(url): \(result.error)")
            }
        }

        @Test("two list entries with one destination are a usage error, before anything is fetched")
        func duplicateOutNames() async throws {
            let directory = TemporaryDirectory()
            let list = "http://127.0.0.1:1/a out=same.bin\nhttp://127.0.0.1:1/b out=same.bin\n"
            let result = try await ChildProcess.run(
                "haul", ["get", "-i", "-", "-d", directory.path, "--state-dir", directory.file("state").path],
                standardInput: list)
            #expect(result.status == 64, "\(result.error)")
            #expect(result.error.contains("two downloads would write"), "\(result.error)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("state").path))
        }

        @Test("credentials are masked by info and list --json, and the state is private")
        func maskedCredentials() async throws {
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path]
            let added = try await ChildProcess.run(
                "haul",
                [
                    "add", "-H", "Authorization: Bearer top-secret-token", "-H", "X-Api-Key: hunter2",
                    "http://127.0.0.1:1/private.bin",
                ] + state)
            #expect(added.status == 0, "\(added.error)")
            let info = try await ChildProcess.run("haul", ["info", "1"] + state)
            let list = try await ChildProcess.run("haul", ["list", "--json"] + state)
            for output in [info.output, list.output] {
                #expect(!output.contains("top-secret-token") && !output.contains("hunter2"), "\(output)")
            }
            #expect(info.output.contains("Authorization: Bearer ***"))
            #expect(list.output.contains("X-Api-Key: ***"))
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("state/haul.sqlite").path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
        }
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
