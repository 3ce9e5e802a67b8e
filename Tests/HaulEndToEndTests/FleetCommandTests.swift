import AsyncHTTPClient
import Foundation
import HaulTestSupport
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// Several `haul run` workers on one PostgreSQL queue (`--database`), one of them killed.
    @Suite(
        "haul workers on a shared PostgreSQL queue",
        .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"))
    struct FleetCommandTests {
        /// Each download's state, file and worker, from `haul list --json`.
        static func listed(_ database: URL) async throws -> [Int: (state: String, file: String?, worker: String?)] {
            let list = try await ChildProcess.run("haul", ["list", "--json", "--database", database.absoluteString])
            var result: [Int: (state: String, file: String?, worker: String?)] = [:]
            for line in list.output.split(separator: "\n") {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                result[try #require(object["id"] as? Int)] = (
                    try #require(object["state"] as? String), object["file"] as? String, object["worker"] as? String
                )
            }
            return result
        }

        /// How long after `start` the origin stopped sending `path` (no new body byte in 300 ms); nil if it still sends
        /// after 10 s.
        static func stopsSending(
            _ origin: TestOrigin, _ path: String, since start: ContinuousClock.Instant
        ) async throws -> Duration? {
            var last = origin.bodyBytesSent(to: path)
            while start.duration(to: .now) < .seconds(10) {
                try await Task.sleep(for: .milliseconds(300))
                let now = origin.bodyBytesSent(to: path)
                if now == last { return start.duration(to: .now) }
                last = now
            }
            return nil
        }

        @Test("three workers drain one queue; one is SIGKILLed; every file ends completed once, byte-exact")
        func threeWorkersOneKilled() async throws {
            let postgres = try await PostgresServer.start()
            let database = try await postgres.makeDatabase()
            let origin = try await TestOrigin.start()
            let small = 60
            let smallSize = 40_000
            let largeSize = 3 * 1024 * 1024
            var urls = (0..<small).map { origin.serve("/s\($0).bin", size: smallSize) }
            let large = (0..<3).map { origin.serve("/large\($0).bin", size: largeSize) }
            urls += large
            origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }  // every response at 1 MiB/s: the large take 3 s
            let directory = TemporaryDirectory()
            let add = try await ChildProcess.run(
                "haul", ["add", "--database", database.absoluteString] + urls.map(\.absoluteString))
            #expect(add.status == 0, "\(add.error)")

            let workers = try (1...3).map { number in
                try ChildProcess(
                    product: "haul",
                    arguments: [
                        "run", "-q", "-j", "4", "--database", database.absoluteString, "-d",
                        directory.file("w\(number)").path, "--worker-name", "w\(number)", "--lease-timeout", "9",
                    ])
            }
            // Kill the first worker while it has a large file under way.
            let started = ContinuousClock.now
            var victim: Int?
            while victim == nil, started.duration(to: .now) < .seconds(60) {
                for number in 1...3 {
                    let folder = directory.file("w\(number)").path
                    let parts = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                    if parts.contains(where: { $0.hasPrefix("large") && $0.hasSuffix(".part") }) { victim = number }
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            let killed = try #require(victim, "no worker started a large file")
            workers[killed - 1].send(SIGKILL)
            _ = try await workers[killed - 1].wait()
            let atKill = try await Self.listed(database)
            #expect(atKill.values.contains { $0.state != "completed" }, "killed mid-way, with work left")
            for (index, worker) in workers.enumerated() where index != killed - 1 {
                #expect(try await worker.wait(timeout: .seconds(120)) == 0, "\(worker.standardError)")
            }

            let listed = try await Self.listed(database)
            #expect(listed.count == urls.count)
            #expect(listed.values.allSatisfy { $0.state == "completed" }, "\(listed.values.map(\.state))")
            // Every file is in exactly one worker's directory, whole.
            for url in urls {
                let name = url.lastPathComponent
                let copies = (1...3).compactMap { directory.contents("w\($0)/\(name)") }
                #expect(copies.count == 1, "\(name) is in \(copies.count) directories")
                let size = name.hasPrefix("large") ? largeSize : smallSize
                #expect(copies.first.map { TestContent.firstMismatch($0, size: size) == nil } == true, "\(name)")
                // The killed worker's download was taken over: ranges, never more than one whole copy again.
                #expect(origin.bodyBytesSent(to: url.path) <= 2 * size, "\(name)")
            }
            await origin.stop()
            await postgres.stop()
        }

        @Test("PostgreSQL stops for 5 s while a worker drains the queue: the worker carries on, every file byte-exact")
        func databaseRestarts() async throws {
            let postgres = try await PostgresServer.start()
            let database = try await postgres.makeDatabase()
            let origin = try await TestOrigin.start()
            let size = 512 * 1024
            let urls = (0..<12).map { origin.serve("/r\($0).bin", size: size) }
            origin.setFaults { $0.bytesPerSecond = 512 * 1024 }  // each file takes a second: the queue lasts ~4 s
            let directory = TemporaryDirectory()
            let db = ["--database", database.absoluteString]
            #expect(
                try await ChildProcess.run("haul", ["add", "-x", "1"] + db + urls.map(\.absoluteString)).status == 0)
            let worker = try ChildProcess(
                product: "haul", arguments: ["run", "-q", "-j", "3", "-d", directory.path, "--worker-name", "w"] + db)
            let started = ContinuousClock.now
            while origin.bodyBytesSent(to: "/r0.bin") < size / 2, started.duration(to: .now) < .seconds(30) {
                try await Task.sleep(for: .milliseconds(20))
            }
            try await postgres.stopServer()
            try await Task.sleep(for: .seconds(5))
            try await postgres.startServer()
            // Main before the pool: the worker's connections stayed closed, and it never finished.
            #expect(try await worker.wait(timeout: .seconds(90)) == 0, "\(worker.standardError)")
            let listed = try await Self.listed(database)
            #expect(listed.count == urls.count)
            #expect(listed.values.allSatisfy { $0.state == "completed" }, "\(listed.values.map(\.state))")
            for url in urls {
                let bytes = directory.contents(url.lastPathComponent)
                #expect(bytes.map { TestContent.firstMismatch($0, size: size) == nil } == true, "\(url.path)")
            }
            await origin.stop()
            await postgres.stop()
        }

        @Test("a pause from another machine's command stops the download where a worker runs it within a second")
        func pauseReachesTheWorker() async throws {
            let postgres = try await PostgresServer.start()
            let database = try await postgres.makeDatabase()
            let origin = try await TestOrigin.start()
            let size = 8 * 1024 * 1024
            let url = origin.serve("/slow.bin", size: size)
            origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
            let directory = TemporaryDirectory()
            let db = ["--database", database.absoluteString]
            #expect(try await ChildProcess.run("haul", ["add", "-x", "1"] + db + [url.absoluteString]).status == 0)
            let worker = try ChildProcess(
                product: "haul", arguments: ["run", "-q", "-d", directory.path, "--worker-name", "solo"] + db)
            let started = ContinuousClock.now
            while origin.bodyBytesSent(to: "/slow.bin") < 512 * 1024, started.duration(to: .now) < .seconds(30) {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await Self.listed(database)[1]?.worker == "solo", "haul list names the worker")
            let table = try await ChildProcess.run("haul", ["list"] + db)
            #expect(table.output.contains("WORKER") && table.output.contains("solo"), "\(table.output)")
            let pause = try await ChildProcess.run("haul", ["pause", "1"] + db)
            #expect(pause.status == 0, "\(pause.error)")
            // The worker sees it by notification and stops: the origin stops sending. The bound allows for how late
            // this process's tasks wake meanwhile (the origin's are among them).
            let lateness = Lateness()
            let stopped = try #require(
                try await Self.stopsSending(origin, "/slow.bin", since: .now), "the download never stopped")
            let late = await lateness.stop()
            #expect(stopped < .milliseconds(1600) + late, "stopped \(stopped) after the pause, tasks woke \(late) late")
            #expect(try await Self.listed(database)[1]?.state == "paused")
            #expect(try await worker.wait(timeout: .seconds(30)) == 0, "the queue has nothing left to run")
            await origin.stop()
            await postgres.stop()
        }

        @Test("the per-host connection limit holds across the workers: never more responses at once than it allows")
        func hostLimitAcrossWorkers() async throws {
            let postgres = try await PostgresServer.start()
            let database = try await postgres.makeDatabase()
            let origin = try await TestOrigin.start()
            let size = 150_000
            let urls = (0..<24).map { origin.serve("/f\($0).bin", size: size) }
            origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }  // each response ~0.15 s: they overlap
            let directory = TemporaryDirectory()
            let db = ["--database", database.absoluteString]
            #expect(try await ChildProcess.run("haul", ["add"] + db + urls.map(\.absoluteString)).status == 0)
            // Alone, each worker would open 3 connections: 9 in all.
            let workers = try (1...3).map { number in
                try ChildProcess(
                    product: "haul",
                    arguments: [
                        "run", "-q", "-j", "4", "--host-connections", "3", "-d", directory.file("w\(number)").path,
                        "--worker-name", "w\(number)",
                    ] + db)
            }
            for worker in workers {
                #expect(try await worker.wait(timeout: .seconds(120)) == 0, "\(worker.standardError)")
            }
            let listed = try await Self.listed(database)
            #expect(listed.count == urls.count && listed.values.allSatisfy { $0.state == "completed" })
            #expect(origin.peakResponses <= 3, "\(origin.peakResponses) responses at once")
            #expect(origin.peakResponses >= 2, "the limit was used, not just one connection at a time")
            await origin.stop()
            await postgres.stop()
        }

        @Test("haul serve on the shared queue shows a download another worker runs, and its pause stops it")
        func serveDrivesTheFleet() async throws {
            let postgres = try await PostgresServer.start()
            let database = try await postgres.makeDatabase()
            let origin = try await TestOrigin.start()
            let url = origin.serve("/slow.bin", size: 16 * 1024 * 1024)
            origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
            let directory = TemporaryDirectory()
            let db = ["--database", database.absoluteString]
            #expect(try await ChildProcess.run("haul", ["add"] + db + [url.absoluteString]).status == 0)
            let worker = try ChildProcess(
                product: "haul", arguments: ["run", "-q", "-d", directory.file("worker").path] + db)
            let started = ContinuousClock.now
            while origin.bodyBytesSent(to: "/slow.bin") < 256 * 1024, started.duration(to: .now) < .seconds(30) {
                try await Task.sleep(for: .milliseconds(20))
            }
            let daemon = try ChildProcess(
                product: "haul",
                arguments: [
                    "serve", "--port", "0", "--secret", "s", "-d", directory.file("daemon").path, "--state-dir",
                    directory.file("state").path,
                ] + db)
            let rpc = try await RPC(daemon: daemon, secret: "s")
            let gid = "0000000000000001"
            // The worker's checkpoints reach the daemon: it shows the download active, its length growing.
            var completed = 0
            while completed < 1024 * 1024, started.duration(to: .now) < .seconds(30) {
                let active = try await rpc.call("aria2.tellActive", [["gid", "completedLength", "status"]])
                let first = (active as? [[String: Any]])?.first { $0["gid"] as? String == gid }
                completed = Int(first?["completedLength"] as? String ?? "") ?? 0
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(completed >= 1024 * 1024, "the daemon saw \(completed) bytes of the worker's download")

            _ = try await rpc.call("aria2.pause", [gid])
            let lateness = Lateness()
            let stopped = try #require(
                try await Self.stopsSending(origin, "/slow.bin", since: .now), "the worker never stopped")
            let late = await lateness.stop()
            #expect(stopped < .milliseconds(1600) + late, "stopped \(stopped) after the pause, tasks woke \(late) late")
            let status = try await rpc.call("aria2.tellStatus", [gid, ["status"]]) as? [String: Any]
            #expect(status?["status"] as? String == "paused")
            #expect(try await worker.wait(timeout: .seconds(30)) == 0)
            daemon.send(SIGTERM)
            _ = try await daemon.wait(timeout: .seconds(30))
            try await rpc.shutdown()
            await origin.stop()
            await postgres.stop()
        }
    }
}

/// A JSON-RPC client of a `haul serve` child process.
struct RPC {
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    let endpoint: String
    let secret: String

    /// Waits for the daemon to print its address.
    init(daemon: ChildProcess, secret: String) async throws {
        self.secret = secret
        do {
            let line = try await ServeStartup.endpointLine(of: daemon)
            guard let address = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
                Issue.record("no address in '\(line)'")
                throw CancellationError()
            }
            endpoint = String(address)
        } catch {
            try await client.shutdown()
            throw error
        }
    }

    /// Calls `method` with the secret and `params`; returns the result, or records the error.
    func call(_ method: String, _ params: [Any]) async throws -> Any? {
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        let body: [String: Any] = [
            "jsonrpc": "2.0", "id": "t", "method": method, "params": ["token:" + secret] + params,
        ]
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        let response = try await client.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let answer = try JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any]
        if let error = answer?["error"] { Issue.record("\(method): \(error)") }
        return answer?["result"]
    }

    func shutdown() async throws { try await client.shutdown() }
}
