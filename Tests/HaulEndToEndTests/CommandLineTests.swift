import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// The `haul` binary run as users run it: arguments, input files, JSON output, the queue commands.
    @Suite("The haul command line")
    struct CommandLineTests {
        @Test(
            "bad input is a usage error (exit 64) with one helpful line, never a stack trace",
            arguments: [
                (["get", "ftp://example.com/a"], "is not an http:// or https:// URL"),
                (["get", "http://"], "is not an http:// or https:// URL"),
                (["get", "--limit-rate", "fast", "http://127.0.0.1/a"], "is not a rate like 500K, 2M or 1G"),
                (["get", "--limit-rate", "-5M", "http://127.0.0.1/a"], "rate"),
                (["get", "--checksum", "sha256=xyz", "http://127.0.0.1/a"], "sha256"),
                (["get", "--checksum", "crc32=00", "http://127.0.0.1/a"], "checksum must look like"),
                (["get", "-o", "a", "http://127.0.0.1/a", "http://127.0.0.1/b"], "-o/--output takes exactly one URL"),
                (["get", "-x", "0", "http://127.0.0.1/a"], "-x/--connections must be 1 to 32"),
                (["get", "-j", "0", "http://127.0.0.1/a"], "-j/--jobs must be at least 1"),
                (["get", "--timeout", "0", "http://127.0.0.1/a"], "--timeout must be a positive number"),
                (["get", "-H", "NoColon", "http://127.0.0.1/a"], "header"),
                (["get", "--quiet", "--json", "http://127.0.0.1/a"], "--quiet and --json cannot be used together"),
                (["get"], "give at least one URL, or -i FILE"),
                (["get", "-i", "/nonexistent/urls.txt"], "cannot read the input file"),
                (["add", "--limit-rate", "1X", "http://127.0.0.1/a"], "is not a rate"),
                (["pause"], "give at least one download id, or --all"),
                (["resume", "3", "--all"], "give ids or --all, not both"),
                (["info", "abc"], "abc"),
                (["info", "99"], "no download with id 99"),
                (["remove", "7"], "no download with id 7"),
                (["list", "--state", "done"], "done"),
                (["frobnicate"], "frobnicate"),
                (["get", "--timeout", "1e10", "http://127.0.0.1/a"], "--timeout must be a positive number of seconds"),
                (["get", "--timeout", "nan", "http://127.0.0.1/a"], "--timeout must be"),
                (["get", "--retries", "0", "http://127.0.0.1/a"], "--retries must be at least 1"),
                (["get", "--retries", "99999999999999999999", "http://127.0.0.1/a"], "retries"),
                (["get", "-j", "100000", "http://127.0.0.1/a"], "at most 1000"),
                (["get", "--retry-max-time", "0", "http://127.0.0.1/a"], "--retry-max-time must be"),
                (["get", "--lowest-speed", "fast", "http://127.0.0.1/a"], "--lowest-speed 'fast' is not a rate"),
                (["get", "--lowest-speed-time", "0", "http://127.0.0.1/a"], "--lowest-speed-time must be"),
                (["get", "--limit-rate", "1e30G", "http://127.0.0.1/a"], "is not a rate"),
                (["add", "--priority", "9999999", "http://127.0.0.1/a"], "--priority must be"),
            ])
        func usageErrors(arguments: [String], message: String) async throws {
            let directory = TemporaryDirectory()
            let result = try await ChildProcess.run(
                "haul", arguments, environment: ["HAUL_STATE_DIR": directory.file("state").path])
            #expect(result.status == 64, "\(arguments): exit \(result.status): \(result.error)")
            #expect(result.error.localizedCaseInsensitiveContains(message), "\(arguments): \(result.error)")
            #expect(!result.error.contains("Fatal error") && !result.error.contains("Stack dump"))
        }

        @Test("-i reads a list (comments, blank lines, out=NAME) and -j bounds the downloads at once")
        func inputFileWithJobs() async throws {
            let origin = try await TestOrigin.start()
            origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
            let sizes = [1_500_001, 700_000, 1_200_000, 999_999, 1_300_000, 1]
            let urls = sizes.enumerated().map { origin.serve("/f\($0.offset).bin", size: $0.element) }
            let directory = TemporaryDirectory()
            let list = """
                # six files; two renamed
                \(urls[0].absoluteString)
                \(urls[1].absoluteString)   out=second.dat

                \(urls[2].absoluteString)
                  # an indented comment
                \(urls[3].absoluteString)\tout=fourth.dat
                \(urls[4].absoluteString)
                \(urls[5].absoluteString)
                """
            try list.write(to: directory.file("urls.txt"), atomically: true, encoding: .utf8)
            let output = directory.file("out")
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "-j", "3", "-x", "1", "-d", output.path, "-i", directory.file("urls.txt").path,
                    "--state-dir", directory.file("state").path,
                ])
            #expect(result.status == 0, "\(result.error)")
            #expect(result.output.isEmpty && result.error.isEmpty, "--quiet prints nothing on success")
            let names = ["f0.bin", "second.dat", "f2.bin", "fourth.dat", "f4.bin", "f5.bin"]
            for (name, size) in zip(names, sizes) {
                let data = try #require(
                    FileManager.default.contents(atPath: output.appendingPathComponent(name).path), "\(name)")
                #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil, "\(name)")
            }
            #expect(origin.peakResponses == 3, "-j 3 runs three at once, not \(origin.peakResponses)")
            await origin.stop()
        }

        @Test("tasks on the event loops: small files, and a file over 4 connections with a checksum, arrive byte-exact")
        func tasksOnEventLoops() async throws {
            let origin = try await TestOrigin.start()
            let small = (0..<40).map { origin.serve("/s\($0).bin", size: 1_000 + 997 * $0) }
            let large = origin.serve("/large.bin", size: 24_000_000)
            let directory = TemporaryDirectory()
            let arguments = [
                "get", "--verbose", "-j", "8", "-x", "4", "-d", directory.path, "--state-dir",
                directory.file("state").path,
            ]
            let result = try await ChildProcess.run(
                "haul", arguments + small.map(\.absoluteString))
            #expect(result.status == 0, "\(result.error)")
            #expect(result.error.contains("tasks run on the HTTP client's event loops"), "\(result.error)")
            for index in 0..<40 {
                let data = try #require(directory.contents("s\(index).bin"), "s\(index).bin")
                #expect(TestContent.firstMismatch(data, size: 1_000 + 997 * index) == nil, "s\(index).bin")
            }
            // The large body is written off the loops while they read its four ranges; the checksum is followed
            // off them too. A throttled one needs its monitor (also off the loops) for progress and checkpoints.
            origin.setFaults { $0.bytesPerSecond = 4 * 1024 * 1024 }
            let checked = try await ChildProcess.run(
                "haul",
                arguments + ["--checksum", "sha256=" + TestContent.sha256(size: 24_000_000), large.absoluteString])
            #expect(checked.status == 0, "\(checked.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("large.bin")), size: 24_000_000) == nil)
            #expect(origin.requests(to: "/large.bin").count >= 4)
            await origin.stop()
        }

        @Test("-i - reads the list from standard input (read once, though arguments are checked before the run)")
        func inputFromStandardInput() async throws {
            let origin = try await TestOrigin.start()
            let urls = [origin.serve("/s0.bin", size: 70_000), origin.serve("/s1.bin", size: 123_457)]
            let directory = TemporaryDirectory()
            let result = try await ChildProcess.run(
                "haul", ["get", "-q", "-d", directory.path, "-i", "-", "--state-dir", directory.file("state").path],
                standardInput: "\(urls[0].absoluteString) out=first.bin\n# a comment\n\(urls[1].absoluteString)\n")
            #expect(result.status == 0, "\(result.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("first.bin")), size: 70_000) == nil)
            #expect(TestContent.firstMismatch(try #require(directory.contents("s1.bin")), size: 123_457) == nil)
            #expect(origin.requests.count == 2)
            await origin.stop()
        }

        @Test("-i reads a FIFO (as `-i <(grep … list)` gives) to its end, once")
        func inputFromFIFO() async throws {
            let origin = try await TestOrigin.start()
            let urls = [origin.serve("/f0.bin", size: 70_000), origin.serve("/f1.bin", size: 1234)]
            let directory = TemporaryDirectory()
            let fifo = directory.file("urls.fifo").path
            #expect(mkfifo(fifo, 0o600) == 0)
            // The writer blocks until haul opens the FIFO, then writes the list and closes it.
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = ["-c", "printf '%s\\n%s\\n' \"$1\" \"$2\" > \"$0\"", fifo] + urls.map(\.absoluteString)
            try writer.run()
            let result = try await ChildProcess.run(
                "haul", ["get", "-q", "-d", directory.path, "-i", fifo, "--state-dir", directory.file("state").path])
            // A haul that never opened the FIFO leaves the writer waiting for a reader (killed: a test process's
            // children may inherit blocked signals, SIGTERM among them).
            if writer.isRunning { kill(writer.processIdentifier, SIGKILL) }
            writer.waitUntilExit()
            #expect(result.status == 0, "\(result.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("f0.bin")), size: 70_000) == nil)
            #expect(TestContent.firstMismatch(try #require(directory.contents("f1.bin")), size: 1234) == nil)
            #expect(origin.requests.count == 2)
            await origin.stop()
        }

        @Test("--json prints one parseable object per event and a final summary")
        func jsonOutput() async throws {
            let origin = try await TestOrigin.start()
            let good = [origin.serve("/a.bin", size: 300_000), origin.serve("/b.bin", size: 5_000_000)]
            let directory = TemporaryDirectory()
            let result = try await ChildProcess.run(
                "haul",
                ["get", "--json", "-d", directory.path, "--state-dir", directory.file("state").path]
                    + good.map(\.absoluteString) + [origin.url("/missing.bin").absoluteString])
            #expect(result.status == 8, "a 404 is an HTTP error")
            #expect(
                result.error.contains("404 Not Found for \(origin.url("/missing.bin").absoluteString): check the URL"))

            let lines = result.output.split(separator: "\n")
            let objects = try lines.map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            }
            let types = objects.compactMap { $0["type"] as? String }
            #expect(types.count == lines.count, "every line has a type")
            #expect(types.filter { $0 == "started" }.count == 3)
            let completed = objects.filter { $0["type"] as? String == "completed" }
            #expect(
                Set(completed.compactMap { $0["file"] as? String }) == [
                    directory.file("a.bin").path, directory.file("b.bin").path,
                ])
            #expect(completed.compactMap { $0["bytes"] as? Int }.sorted() == [300_000, 5_000_000])
            let failed = try #require(objects.first { $0["type"] as? String == "failed" })
            let error = try #require(failed["error"] as? [String: Any])
            #expect(error["httpStatus"] as? Int == 404)
            #expect(error["code"] as? Int != nil && error["suggestion"] as? String == "check the URL")
            // The code (6, httpClientError) is not the exit status: the object says which status it gives.
            #expect(error["code"] as? Int == 6 && error["name"] as? String == "httpClientError")
            #expect(error["exitStatus"] as? Int == Int(result.status), "\(error)")

            let summary = try #require(objects.last)
            #expect(summary["type"] as? String == "summary")
            #expect(summary["exitCode"] as? Int == 8)
            #expect(summary["completed"] as? Int == 2 && summary["failed"] as? Int == 1)
            #expect((summary["downloads"] as? [Any])?.count == 3)

            // Again: both files are already complete; nothing is fetched.
            let requestsBefore = origin.requests.count
            let again = try await ChildProcess.run(
                "haul",
                ["get", "--json", "-d", directory.path, "--state-dir", directory.file("state").path]
                    + good.map(\.absoluteString))
            #expect(again.status == 0)
            #expect(again.output.contains("\"alreadyComplete\":true"))
            #expect(origin.requests.count == requestsBefore)
            await origin.stop()
        }

        @Test("add, list, pause, run, resume, info, remove over one database")
        func queueCommands() async throws {
            let origin = try await TestOrigin.start()
            let sizes = [400_000, 900_000, 1_234_567]
            let urls = sizes.enumerated().map { origin.serve("/q\($0.offset).bin", size: $0.element).absoluteString }
            let directory = TemporaryDirectory()
            let work = directory.file("work")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let state = ["--state-dir", directory.file("state").path]
            func haul(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
                try await ChildProcess.run("haul", arguments + state, currentDirectory: work)
            }

            let added = try await haul(["add"] + urls)
            #expect(added.status == 0, "\(added.error)")
            #expect(added.output == "#1 queued \(urls[0])\n#2 queued \(urls[1])\n#3 queued \(urls[2])\n")
            #expect(origin.requests.isEmpty, "add downloads nothing")
            #expect(
                try await haul(["add", urls[0]]).output == "#1 queued \(urls[0])\n", "the same URL is not added twice")

            let listed = try await haul(["list"])
            #expect(listed.output.split(separator: "\n").count == 4)
            #expect(listed.output.components(separatedBy: "queued").count - 1 == 3)

            #expect(try await haul(["pause", "#2"]).output == "#2 paused\n")
            let ran = try await haul(["run", "-q"])
            #expect(ran.status == 0, "\(ran.error)")
            let states = try Self.states(try await haul(["list", "--json"]).output)
            #expect(states == [1: "completed", 2: "paused", 3: "completed"])
            #expect(origin.requests(to: "/q1.bin").isEmpty)
            #expect(TestContent.firstMismatch(try #require(directory.contents("work/q0.bin")), size: sizes[0]) == nil)

            #expect(try await haul(["list", "--state", "paused"]).output.contains("q1.bin"))
            #expect(try await haul(["resume", "--all"]).output == "#2 queued\n")
            #expect(try await haul(["run", "-q"]).status == 0)
            #expect(TestContent.firstMismatch(try #require(directory.contents("work/q1.bin")), size: sizes[1]) == nil)

            let info = try await haul(["info", "2", "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(info.output.utf8)) as? [String: Any])
            #expect(object["state"] as? String == "completed")
            #expect(object["totalBytes"] as? Int == sizes[1])
            #expect(object["file"] as? String == work.appendingPathComponent("q1.bin").path)
            #expect(try await haul(["info", "2"]).output.contains("State:         completed"))

            #expect(try await haul(["remove", "1", "--delete-file"]).output == "#1 removed\n")
            #expect(try await haul(["remove", "3"]).status == 0)
            #expect(!FileManager.default.fileExists(atPath: work.appendingPathComponent("q0.bin").path))
            #expect(
                FileManager.default.fileExists(atPath: work.appendingPathComponent("q2.bin").path),
                "kept without --delete-file")
            #expect(try Self.states(try await haul(["list", "--json"]).output) == [2: "completed"])
            await origin.stop()
        }

        @Test(
            "a list longer than a batch: a later batch's failure keeps the earlier ones; adding it again adds the rest")
        func addInBatches() async throws {
            let directory = TemporaryDirectory()
            let work = directory.file("work")
            let state = ["--state-dir", directory.file("state").path]
            // Nothing is fetched: the URLs need no server.
            let urls = (1...10_000).map { "http://127.0.0.1:9/b/\($0).bin" }
            let list = urls.joined(separator: "\n") + "\nhttp://127.0.0.1:9/other.bin out=last.bin\n"
            try list.write(to: directory.file("list.txt"), atomically: true, encoding: .utf8)
            let add = ["add", "-d", work.path, "-i", directory.file("list.txt").path] + state

            // An unfinished download already writes the last line's file.
            let blocker = try await ChildProcess.run(
                "haul", ["add", "-o", work.appendingPathComponent("last.bin").path, "http://127.0.0.1:9/a.bin"] + state)
            #expect(blocker.status == 0, "\(blocker.error)")
            let first = try await ChildProcess.run("haul", add)
            #expect(first.status != 0)
            #expect(first.error.contains("already writes"), "\(first.error)")
            #expect(first.error.contains("the first 10000 downloads of the list were added"), "\(first.error)")
            let rows = try await ChildProcess.run("haul", ["list"] + state).output.split(separator: "\n")
            #expect(rows.count == 1 + 10_001, "the header, the blocker and the first batch")
            #expect(rows.dropFirst().filter { $0.contains("queued") }.count == 10_001)

            #expect(try await ChildProcess.run("haul", ["remove", "1"] + state).status == 0)
            let again = try await ChildProcess.run("haul", add)
            #expect(again.status == 0, "\(again.error)")
            let lines = again.output.split(separator: "\n")
            #expect(lines.count == 10_001)
            #expect(lines.first == "#2 queued \(urls[0])", "the first batch kept its downloads")
            #expect(lines.last == "#10002 queued http://127.0.0.1:9/other.bin")
            let json = try await ChildProcess.run("haul", ["list", "--json"] + state).output
            #expect(try Self.states(json).count == 10_001)
        }

        @Test("adding a download again: -x 1 replaces -x 4, no -x keeps the count, -x auto chooses again")
        func connectionCountOnAddingAgain() async throws {
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path]
            // Nothing is fetched: the URL needs no server.
            let add = ["add", "-d", directory.path, "http://127.0.0.1:9/x.bin"] + state
            func connections() async throws -> String {
                let info = try await ChildProcess.run("haul", ["info", "1"] + state).output
                return info.split(separator: "\n").first { $0.contains("Connections") }.map(String.init) ?? info
            }
            for (extra, expected) in [
                (["-x", "4"], "4"), (["-x", "1"], "1"), ([], "1"), (["-x", "3"], "3"), ([], "3"),
                (["-x", "auto"], "auto (up to 16)"), ([], "auto (up to 16)"), (["-x", "1"], "1"),
            ] {
                let result = try await ChildProcess.run("haul", add + extra)
                #expect(result.status == 0, "\(result.error)")
                let shown = try await connections()
                #expect(shown.hasSuffix(" " + expected), "after add \(extra): \(shown)")
            }
        }

        @Test("haul pause from another terminal stops a running haul run; haul resume and run finish it byte-exact")
        func pauseFromAnotherProcess() async throws {
            let origin = try await TestOrigin.start()
            let size = 6 * 1024 * 1024 + 5
            let url = origin.serve("/p.bin", size: size)
            // The first response stops at half the file (the resumed one is whole): a pause that comes late on a busy
            // machine still meets a download under way, never a finished one.
            origin.holdFirstResponse(at: size / 2)
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path]
            let add = try await ChildProcess.run(
                "haul", ["add", "-x", "1", "-d", directory.path, url.absoluteString] + state)
            #expect(add.status == 0, "\(add.error)")

            let runner = try ChildProcess(product: "haul", arguments: ["run"] + state)
            let part = directory.file("p.bin.part").path
            try await waitForFile(part, atLeast: 256 * 1024)
            let pause = try await ChildProcess.run("haul", ["pause", "1"] + state)
            #expect(pause.output == "#1 paused\n", "\(pause.error)")
            #expect(
                try await runner.wait(timeout: .seconds(30)) == 0,
                "the queue is empty once it pauses: \(runner.standardError)")
            let pausedAt = try #require(fileSize(part))
            #expect(pausedAt < size)

            origin.setFaults { $0.bytesPerSecond = nil }
            #expect(try await ChildProcess.run("haul", ["resume", "1"] + state).status == 0)
            let second = try await ChildProcess.run("haul", ["run", "-q"] + state)
            #expect(second.status == 0, "\(second.error)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("p.bin")), size: size) == nil)
            let requests = origin.requests(to: "/p.bin")
            #expect(requests.count == 2)
            #expect(requests.last?.range != nil && requests.last?.range != "bytes=0-")
            await origin.stop()
        }

        @Test("haul remove from another terminal: the run shows the download removed, not failed, and exits 0")
        func removeFromAnotherProcess() async throws {
            let origin = try await TestOrigin.start()
            let size = 6 * 1024 * 1024 + 5
            let slow = origin.serve("/slow.bin", size: size)
            let small = origin.serve("/small.bin", size: 1000)
            // Six seconds at least for the slow one (its response may also be the one held at half the file): a
            // removal that comes late still meets it running.
            origin.holdFirstResponse(at: size / 2)
            let directory = TemporaryDirectory()
            let state = ["--state-dir", directory.file("state").path]
            let add = try await ChildProcess.run(
                "haul", ["add", "-x", "1", "-d", directory.path, small.absoluteString, slow.absoluteString] + state)
            #expect(add.status == 0, "\(add.error)")

            let runner = try ChildProcess(product: "haul", arguments: ["run", "-j", "2", "--json"] + state)
            try await waitForFile(directory.file("slow.bin.part").path, atLeast: 256 * 1024)
            try await waitForFile(directory.file("small.bin").path, atLeast: 1000)
            let remove = try await ChildProcess.run("haul", ["remove", "--all"] + state)
            #expect(remove.status == 0, "\(remove.error)")
            #expect(try await runner.wait(timeout: .seconds(30)) == 0, "\(runner.standardError)")
            #expect(!runner.standardError.contains("removed by another"), "no error line: \(runner.standardError)")
            let summaryLine = try #require(
                runner.standardOutput.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") })
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(summaryLine.utf8)) as? [String: Any])
            #expect(summary["exitCode"] as? Int == 0)
            #expect(summary["failed"] as? Int == 0)
            #expect(summary["completed"] as? Int == 1, "the one completed before the removal stays completed")
            let states = (summary["downloads"] as? [[String: Any]] ?? []).compactMap { $0["state"] as? String }.sorted()
            #expect(states == ["completed", "removed"], "\(runner.standardOutput)\n\(runner.standardError)")
            #expect(directory.contents("small.bin")?.count == 1000, "its file stays (no --delete-file)")
            await origin.stop()
        }

        @Test("two haul processes never download the same file at once; when the first is killed the second takes over")
        func oneProcessPerDownload() async throws {
            let origin = try await TestOrigin.start()
            let size = 4 * 1024 * 1024 + 77
            let url = origin.serve("/shared.bin", size: size)
            // The first process's response stops at 3 MiB (the second's is whole): a kill that comes late still meets
            // a download under way, with the second process waiting for it.
            origin.setFaults {
                $0.bytesPerSecond = 1024 * 1024
                $0.stallAfter = 3 * 1024 * 1024
                $0.stallTimes = 1
            }
            let directory = TemporaryDirectory()
            let arguments = [
                "get", "-q", "-x", "1", "-d", directory.path, "--state-dir", directory.file("state").path,
                url.absoluteString,
            ]
            let first = try ChildProcess(product: "haul", arguments: arguments)
            let part = directory.file("shared.bin.part").path
            try await waitForFile(part, atLeast: 256 * 1024)
            let second = try ChildProcess(product: "haul", arguments: arguments)
            try await Task.sleep(for: .milliseconds(1500))
            #expect(origin.requests(to: "/shared.bin").count == 1, "the second process waits instead of fetching too")
            #expect(second.process.isRunning)

            first.send(SIGKILL)
            _ = try await first.wait()
            origin.setFaults { $0.bytesPerSecond = nil }
            #expect(try await second.wait(timeout: .seconds(60)) == 0, "\(second.standardError)")
            #expect(TestContent.firstMismatch(try #require(directory.contents("shared.bin")), size: size) == nil)
            let requests = origin.requests(to: "/shared.bin")
            #expect(requests.count == 2, "one request each, the second a resume")
            #expect(requests.last?.range != nil && requests.last?.range != "bytes=0-")
            await origin.stop()
        }

        @Test("on a terminal: bars redrawn in place at most ~10 times a second, then a summary")
        func terminalDisplay() async throws {
            let script = URL(fileURLWithPath: "/usr/bin/script")
            try #require(FileManager.default.isExecutableFile(atPath: script.path), "util-linux script(1) is needed")
            let origin = try await TestOrigin.start()
            let size = 6 * 1024 * 1024
            let url = origin.serve("/tty.bin", size: size)
            origin.setFaults { $0.bytesPerSecond = 3 * 1024 * 1024 }
            let directory = TemporaryDirectory()
            let haul = try ChildProcess.locate("haul").path
            let typescript = directory.file("typescript")
            let command = [
                haul, "get", "-x", "1", "-d", directory.path, "--state-dir", directory.file("state").path,
                url.absoluteString,
            ].joined(separator: " ")
            let started = ContinuousClock.now
            let child = try ChildProcess(
                executable: script, arguments: ["-q", "-e", "-c", command, typescript.path],
                environment: ["TERM": "xterm", "COLUMNS": "80"])
            #expect(try await child.wait() == 0, "\(child.standardError)")
            let seconds = ContinuousClock.now.seconds(since: started)
            #expect(TestContent.firstMismatch(try #require(directory.contents("tty.bin")), size: size) == nil)

            let screen = try String(contentsOf: typescript, encoding: .utf8)
            let frames = screen.components(separatedBy: "Total ").count - 1
            let cursorUps = screen.components(separatedBy: "\u{1B}[2A").count - 1
            #expect(frames >= 5, "the bars were drawn repeatedly: \(frames) frames in \(seconds) s")
            #expect(cursorUps >= 4, "and redrawn in place (cursor up over the two bar lines), not scrolled")
            #expect(Double(frames) <= seconds * 11 + 3, "at most ~10 frames a second: \(frames) in \(seconds) s")
            #expect(screen.contains("tty.bin") && screen.contains("%") && screen.contains("B/s"))
            let bars = Self.visibleLines(screen).filter { $0.hasPrefix("Total ") || $0.contains("% [") }
            #expect(bars.count >= frames)
            for line in bars {
                #expect(line.count <= 79, "a bar is never as wide as the terminal (no wrapping): \(line)")
            }
            #expect(screen.contains("AVG SPEED"), "a summary at the end")
            #expect(screen.contains("1 download: 1 done"))
            await origin.stop()
        }

        /// Download id to state, from `haul list --json`.
        static func states(_ ndjson: String) throws -> [Int: String] {
            var states: [Int: String] = [:]
            for line in ndjson.split(separator: "\n") {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                states[try #require(object["id"] as? Int)] = object["state"] as? String
            }
            return states
        }

        /// The text of each line written to a terminal, without escape sequences.
        static func visibleLines(_ screen: String) -> [String] {
            let stripped = screen.replacingOccurrences(
                of: "\u{1B}\\[[0-9;?]*[A-Za-z]", with: "", options: .regularExpression)
            return stripped.components(separatedBy: CharacterSet(charactersIn: "\r\n")).filter { !$0.isEmpty }
        }
    }

}

extension ContinuousClock.Instant {
    func seconds(since start: ContinuousClock.Instant) -> Double {
        let duration = start.duration(to: self)
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
