import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    @Suite("Crash safety of the haul process")
    struct CrashTests {
        @Test(
            "SIGKILL early, midway and late: a new process resumes byte-exact, fetching almost nothing twice",
            arguments: [0.1, 0.5, 0.9])
        func killAndResume(at fraction: Double) async throws {
            let origin = try await TestOrigin.start()
            let size = 24 * 1024 * 1024 + 13
            let url = origin.serve("/big.bin", size: size)
            let target = Int(Double(size) * fraction)
            // The first response stops 1 MiB past the kill point (the resume is served whole): a kill that comes late
            // on a busy machine still meets a download under way, never a finished one.
            origin.setFaults {
                $0.bytesPerSecond = 16 * 1024 * 1024
                $0.stallAfter = target + 1024 * 1024
                $0.stallTimes = 1
            }
            let directory = TemporaryDirectory()
            let output = directory.file("big.bin").path
            let arguments = [
                "get", "--quiet", "-x", "1", "--state-dir", directory.file("state").path, "-o", output,
                url.absoluteString,
            ]

            let first = try ChildProcess(product: "haul", arguments: arguments)
            if !(try await waitForFile(output + ".part", atLeast: target)) { Issue.record("no progress") }
            first.send(SIGKILL)
            #expect(try await first.wait() == SIGKILL || first.process.terminationReason == .uncaughtSignal)
            let partSize = try #require(fileSize(output + ".part"))
            let sentBeforeKill = origin.bodyBytesSent(to: "/big.bin")

            origin.setFaults { $0.bytesPerSecond = nil }
            let second = try ChildProcess(product: "haul", arguments: arguments)
            #expect(try await second.wait() == 0, "\(second.standardError)")

            let data = try #require(FileManager.default.contents(atPath: output))
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            #expect(!FileManager.default.fileExists(atPath: output + ".part"))
            let requests = origin.requests(to: "/big.bin")
            #expect(requests.count == 2)
            let overlap = min(partSize, 64 * 1024)
            #expect(requests.last?.range == "bytes=\(partSize - overlap)-")
            #expect(requests.last?.ifRange == TestOrigin.Resource(size: size).etag)
            let wasted = origin.bodyBytesSent(to: "/big.bin") - size
            print(
                "SIGKILL at \(Int(fraction * 100))%: part file \(partSize) B, server had sent \(sentBeforeKill) B;",
                "re-downloaded \(wasted) B (of which \(overlap) B deliberate overlap)")
            #expect(wasted <= 1024 * 1024 + overlap)
            await origin.stop()
        }

        @Test(
            "SIGKILL during a 4-connection download: every segment resumes where it was, byte-exact",
            arguments: [0.3, 0.7])
        func killSegmented(after fraction: Double) async throws {
            let origin = try await TestOrigin.start()
            let size = 16 * 1024 * 1024 + 5
            let url = origin.serve("/multi.bin", size: size)
            origin.setFaults {
                $0.bytesPerSecond = 1024 * 1024  // per connection: ~4 s in all
                // Every response stops half a MiB short of a segment (a quarter of the file): the four connections
                // still bring 3.5 MiB each, past both kill points, but a kill that comes late meets no finished file.
                $0.stallAfter = size / 4 - 512 * 1024
            }
            let directory = TemporaryDirectory()
            let output = directory.file("multi.bin").path
            let arguments = [
                "get", "--quiet", "-x", "4", "--state-dir", directory.file("state").path, "-o", output,
                url.absoluteString,
            ]
            let first = try ChildProcess(product: "haul", arguments: arguments)
            let start = ContinuousClock.now
            while !FileManager.default.fileExists(atPath: output + ".part.segments"),
                start.duration(to: .now) < .seconds(60)
            {
                try await Task.sleep(for: .milliseconds(5))
            }
            while origin.bodyBytesSent(to: "/multi.bin") < Int(Double(size) * fraction),
                start.duration(to: .now) < .seconds(60)
            {
                try await Task.sleep(for: .milliseconds(5))
            }
            first.send(SIGKILL)
            try await first.wait()
            let sentBeforeKill = origin.bodyBytesSent(to: "/multi.bin")
            let requestsBeforeKill = origin.requests(to: "/multi.bin").count
            #expect(origin.peakResponses == 4)

            origin.setFaults {
                $0.bytesPerSecond = nil
                $0.stallAfter = nil
            }
            let second = try ChildProcess(product: "haul", arguments: arguments)
            #expect(try await second.wait() == 0, "\(second.standardError)")
            let data = try #require(FileManager.default.contents(atPath: output))
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            #expect(!FileManager.default.fileExists(atPath: output + ".part.segments"))
            let resumed = origin.requests(to: "/multi.bin").dropFirst(requestsBeforeKill)
            #expect(resumed.allSatisfy { $0.ifRange == TestOrigin.Resource(size: size).etag })
            let wasted = origin.bodyBytesSent(to: "/multi.bin") - size
            print(
                "SIGKILL with 4 connections after \(sentBeforeKill) B sent: re-downloaded \(wasted) B",
                "(up to 4 × 64 KiB of it deliberate overlap)")
            #expect(wasted <= 1024 * 1024 + 4 * 64 * 1024)
            await origin.stop()
        }

        @Test(
            "SIGKILL while small files held in memory are being finished: the next run completes each, byte-exact, under its name",
            arguments: ["after-held-bodies-recorded", "before-completion-recorded"], ["1", "4"])
        func killWhileFinishingSmallFiles(at point: String, connections: String) async throws {
            let origin = try await TestOrigin.start()
            let sizes = (0..<24).map { 1_000 + 3_000 * $0 }
            let names = sizes.indices.map { "s\($0).bin" }
            let urls = zip(names, sizes).map { origin.serve("/" + $0, size: $1) }
            let directory = TemporaryDirectory()
            let (arguments, files) = try BatchCrashTests.getList(urls, connections: connections, in: directory)
            let first = try ChildProcess(
                product: "haul", arguments: arguments, environment: ["HAUL_CRASH_POINT": point])
            _ = try await first.wait()
            #expect(first.process.terminationReason == .uncaughtSignal, "it did not reach the crash point")

            let second = try ChildProcess(product: "haul", arguments: arguments)
            #expect(try await second.wait() == 0, "\(second.standardError)")
            // Every file under the name it was first given: no part file left, no second copy beside it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: files.path).sorted() == names.sorted())
            for (name, size) in zip(names, sizes) {
                let data = try #require(FileManager.default.contents(atPath: files.appendingPathComponent(name).path))
                #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil, "\(name)")
            }
            await origin.stop()
        }

        @Test(
            "SIGKILL in the last milliseconds of a 4-connection download: the next run fetches nothing again",
            arguments: ["after-last-byte", "before-finalizing-recorded"])
        func killAfterLastByte(at point: String) async throws {
            let origin = try await TestOrigin.start()
            let size = 12 * 1024 * 1024 + 9
            let url = origin.serve("/last.bin", size: size)
            let directory = TemporaryDirectory()
            let output = directory.file("last.bin").path
            let arguments = [
                "get", "-q", "-x", "4", "--state-dir", directory.file("state").path, "-o", output, url.absoluteString,
            ]
            let first = try ChildProcess(
                product: "haul", arguments: arguments, environment: ["HAUL_CRASH_POINT": point])
            _ = try await first.wait()
            #expect(first.process.terminationReason == .uncaughtSignal, "it did not reach the crash point")
            let sent = origin.bodyBytesSent(to: "/last.bin")
            let second = try ChildProcess(product: "haul", arguments: arguments)
            #expect(try await second.wait() == 0, "\(second.standardError)")
            let data = try #require(FileManager.default.contents(atPath: output))
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            let again = origin.bodyBytesSent(to: "/last.bin") - sent
            #expect(again <= 4 * 64 * 1024, "fetched \(again) bytes again")
            #expect(!FileManager.default.fileExists(atPath: output + ".part.segments"))
            await origin.stop()
        }

        @Test("Ctrl-C stops cleanly with exit 130 and a resume hint; the same command resumes")
        func interruptAndRerun() async throws {
            let origin = try await TestOrigin.start()
            let size = 8 * 1024 * 1024
            let url = origin.serve("/int.bin", size: size)
            // The first response stops at 1 MiB (the resume is served whole): a Ctrl-C that comes late still stops a
            // download under way.
            origin.setFaults {
                $0.bytesPerSecond = 1024 * 1024
                $0.stallAfter = 1024 * 1024
                $0.stallTimes = 1
            }
            let directory = TemporaryDirectory()
            let arguments = [
                "get", "-x", "1", "--state-dir", directory.file("state").path, "-d", directory.path, url.absoluteString,
            ]
            let first = try ChildProcess(product: "haul", arguments: arguments)
            let part = directory.file("int.bin.part").path
            try await waitForFile(part, atLeast: 512 * 1024)
            first.send(SIGINT)
            let status = try await first.wait()
            #expect(status == 130, "exit \(status): \(first.standardError)")
            #expect(first.standardError.contains("run the same command again to resume"))
            let stoppedAt = try #require(fileSize(part))

            origin.setFaults { $0.bytesPerSecond = nil }
            let second = try ChildProcess(product: "haul", arguments: arguments)
            #expect(try await second.wait() == 0, "\(second.standardError)")
            #expect(second.standardError.contains("saved"))
            let data = try #require(directory.contents("int.bin"))
            #expect(TestContent.firstMismatch(data, size: size) == nil)
            #expect(origin.requests(to: "/int.bin").last?.range == "bytes=\(stoppedAt - 64 * 1024)-")
            await origin.stop()
        }

        @Test(
            "exit codes: 0 done, 8 for 404, 6 for a refused port or an unknown host, 3 for a checksum mismatch, 64 for bad arguments"
        )
        func exitCodes() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/ok.bin", size: 1000)
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path, "-d", directory.path]

            let ok = try ChildProcess(product: "haul", arguments: ["get", "-q"] + state + [url.absoluteString])
            #expect(try await ok.wait() == 0)

            let missing = try ChildProcess(
                product: "haul", arguments: ["get", "-q"] + state + [origin.url("/nope").absoluteString])
            #expect(try await missing.wait() == 8)
            #expect(missing.standardError.contains("404 Not Found"))
            #expect(missing.standardError.contains("check the URL"))

            // Nothing listens on port 1; `.invalid` never resolves (RFC 2606).
            for (address, says) in [
                ("http://127.0.0.1:1/x.bin", "connection refused"),
                ("http://no-such-host.invalid/x.bin", "could not resolve the host name"),
            ] {
                let unreachable = try ChildProcess(
                    product: "haul",
                    arguments: ["get", "-q", "--retries", "1", "--connect-timeout", "5"] + state + [address])
                #expect(try await unreachable.wait() == 6, "\(address)")
                #expect(unreachable.standardError.contains(says), "\(unreachable.standardError)")
            }

            let sum = "sha256=" + String(repeating: "0", count: 64)
            let bad = try ChildProcess(
                product: "haul",
                arguments: ["get", "-q", "--checksum", sum] + state + [
                    origin.serve("/sum.bin", size: 10).absoluteString
                ])
            #expect(try await bad.wait() == 3)
            #expect(!FileManager.default.fileExists(atPath: directory.file("sum.bin").path))

            for arguments in [
                ["get"], ["get", "notaurl"], ["get", "--checksum", "sha256=xyz", url.absoluteString],
                ["get", "--limit-rate", "fast", url.absoluteString],
            ] {
                let usage = try ChildProcess(product: "haul", arguments: arguments + state)
                #expect(try await usage.wait() == 64, "\(arguments)")
                #expect(!usage.standardError.isEmpty)
            }
            await origin.stop()
        }
    }
}
