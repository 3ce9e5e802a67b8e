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
    /// What a daemon left running offers around its downloads (docs/service.md): `/metrics` read by Prometheus's own
    /// parser, `/healthz` and `/readyz` with the store stopped and started, a full disk waited out.
    @Suite("haul serve as a service: metrics, health, free space")
    struct ServiceCommandTests {
        static let secret = "service-secret"

        static func serve(_ directory: TemporaryDirectory, _ extra: [String] = []) throws -> ChildProcess {
            try ChildProcess(
                product: "haul",
                arguments: [
                    "serve", "--port", "0", "--secret", secret, "-d", directory.file("downloads").path,
                    "--state-dir", directory.file("state").path,
                ] + extra)
        }

        @Test(
            "/metrics parsed by prometheus_client: bytes received equal the files' sizes, per host too; tokens",
            .enabled(if: PrometheusParser.python != nil, "prometheus-client is not in .build/python-venv (.ci/run)"))
        func metrics() async throws {
            let origin = try await TestOrigin.start()
            let sizes = [1_234_567, 300_001, 65_536]
            let urls = sizes.enumerated().map { origin.serve("/m\($0.offset).bin", size: $0.element) }
            let directory = TemporaryDirectory()
            let daemon = try Self.serve(directory, ["--metrics-token", "read-only"])
            let rpc = try await RPC(daemon: daemon, secret: Self.secret)
            var gids: [String] = []
            for url in urls {
                gids.append(try #require(try await rpc.call("aria2.addUri", [[url.absoluteString]]) as? String))
            }
            for gid in gids { try await rpc.waitForStatus(gid, "complete") }

            let denied = try await rpc.get("/metrics")
            #expect(denied.status == 401)
            let wrong = try await rpc.get("/metrics", bearer: "guess")
            #expect(wrong.status == 401)
            let scrape = try await rpc.get("/metrics", bearer: "read-only")
            #expect(scrape.status == 200, "\(scrape.body)")
            let bySecret = try await rpc.get("/metrics", bearer: Self.secret)
            #expect(bySecret.status == 200)

            let samples = try await PrometheusParser.parse(scrape.body)
            let total = sizes.reduce(0, +)
            #expect(samples["haul_received_bytes_total"] == Double(total), "\(scrape.body)")
            #expect(samples["haul_host_received_bytes_total{host=127.0.0.1}"] == Double(total))
            #expect(samples["haul_downloads{state=completed}"] == 3)
            #expect(samples["haul_downloads{state=running}"] == 0)
            #expect(samples["haul_downloads_completed_total"] == 3)
            #expect(samples["haul_store_up"] == 1)
            #expect((samples["haul_rpc_duration_seconds_count{method=aria2.addUri}"] ?? 0) == 3)
            #expect((samples["haul_rpc_duration_seconds_count{method=aria2.tellStatus}"] ?? 0) >= 3)
            #expect((samples["haul_store_duration_seconds_count{operation=probe}"] ?? 0) >= 1)
            #expect(samples["haul_verification_failures_total"] == 0)

            #expect(try await rpc.get("/healthz").status == 200)
            let ready = try await rpc.get("/readyz")
            #expect(ready.status == 200 && ready.body == "ready\n")
            _ = try? await rpc.call("aria2.shutdown", [])
            try await daemon.wait(timeout: .seconds(30))
            try await rpc.shutdown()
            await origin.stop()
        }

        @Test(
            "/metrics counts the outbox: a webhook whose receiver refuses leaves events waiting and failures counted",
            .enabled(if: PrometheusParser.python != nil, "prometheus-client is not in .build/python-venv (.ci/run)"))
        func outboxMetrics() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/outbox.bin", size: 10_000)
            // A port nothing listens on: the origin's, once it is stopped.
            let refusing = try await TestOrigin.start()
            let receiver = "http://127.0.0.1:\(refusing.port)/events"
            await refusing.stop()
            let directory = TemporaryDirectory()
            let daemon = try Self.serve(directory, ["--webhook", receiver, "--webhook-max-delay", "1"])
            let rpc = try await RPC(daemon: daemon, secret: Self.secret)
            let gid = try #require(try await rpc.call("aria2.addUri", [[url.absoluteString]]) as? String)
            try await rpc.waitForStatus(gid, "complete")
            var samples: [String: Double] = [:]
            let start = ContinuousClock.now
            while start.duration(to: .now) < .seconds(30) {
                samples = try await PrometheusParser.parse(try await rpc.get("/metrics", bearer: Self.secret).body)
                if (samples["haul_outbox_depth"] ?? 0) >= 2,
                    (samples["haul_outbox_delivery_failures_total{receiver=webhook}"] ?? 0) >= 1
                {
                    break
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            // The start and complete events wait for the receiver (in order: the complete event waits behind the
            // start event, whose attempts fail; AsyncHTTPClient tries a refused connection again until the request's
            // time limit, so an attempt takes up to that limit).
            #expect((samples["haul_outbox_depth"] ?? 0) >= 2, "\(samples)")
            #expect((samples["haul_outbox_delivery_failures_total{receiver=webhook}"] ?? 0) >= 1, "\(samples)")
            _ = try? await rpc.call("aria2.shutdown", [])
            try await daemon.wait(timeout: .seconds(30))
            try await rpc.shutdown()
            await origin.stop()
        }

        @Test(
            "/readyz is 503 with the reason while PostgreSQL is stopped, 200 once it is back",
            .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"))
        func readiness() async throws {
            let postgres = try await PostgresServer.start()
            let database = try await postgres.makeDatabase()
            let directory = TemporaryDirectory()
            let daemon = try Self.serve(directory, ["--database", database.absoluteString])
            let rpc = try await RPC(daemon: daemon, secret: Self.secret)
            #expect(try await rpc.get("/readyz").status == 200)

            try await postgres.stopServer()
            let down = try await rpc.get("/readyz")
            #expect(down.status == 503, "\(down.body)")
            #expect(down.body.hasPrefix("not ready: "), "\(down.body)")
            #expect(try await rpc.get("/healthz").status == 200, "alive, though not ready")
            let scrape = try await PrometheusParser.parseIfAvailable(
                try await rpc.get("/metrics", bearer: Self.secret).body)
            if let scrape { #expect(scrape["haul_store_up"] == 0) }

            try await postgres.startServer()
            var up = try await rpc.get("/readyz")
            let start = ContinuousClock.now
            while up.status != 200, start.duration(to: .now) < .seconds(20) {
                try await Task.sleep(for: .milliseconds(200))
                up = try await rpc.get("/readyz")
            }
            #expect(up.status == 200, "\(up.body)")
            daemon.send(SIGTERM)
            try await daemon.wait(timeout: .seconds(30))
            try await rpc.shutdown()
            await postgres.stop()
        }

        @Test("a small tmpfs fills: the download waits for space (shown in haul list), space is freed, byte-exact")
        func fullDiskWaits() async throws {
            let directory = TemporaryDirectory()
            guard let mount = try await EndToEnd.smallFileSystem("8m", named: "small", in: directory) else { return }
            let origin = try await TestOrigin.start()
            let size = 3_000_017
            let url = origin.serve("/big.bin", size: size)
            defer { _ = try? ChildProcess(executable: URL(fileURLWithPath: "/bin/umount"), arguments: [mount.path]) }
            // Leave about 1.5 MiB free: the download gets part of the way, then finds the disk full.
            let filler = mount.appendingPathComponent("filler")
            try Data(count: 6_500_000).write(to: filler)
            let state = directory.file("state").path
            let get = try ChildProcess(
                product: "haul",
                arguments: [
                    "get", "-q", "-x", "1", "--state-dir", state, "-d", mount.path, "--min-free-space", "0",
                    "--space-check-interval", "0.2", url.absoluteString,
                ])
            var listed = ""
            let start = ContinuousClock.now
            while !listed.contains("waiting for space"), start.duration(to: .now) < .seconds(30), get.process.isRunning
            {
                try await Task.sleep(for: .milliseconds(200))
                listed = try await ChildProcess.run("haul", ["list", "--state-dir", state]).output
            }
            #expect(listed.contains("waiting for space"), "\(listed) \(get.standardError)")
            let json = try await ChildProcess.run("haul", ["list", "--json", "--state-dir", state]).output
            #expect(json.contains("\"waitingFor\":\"space\""), "\(json)")
            #expect(get.process.isRunning, "it waits instead of failing: \(get.standardError)")
            try FileManager.default.removeItem(at: filler)
            let status = try await get.wait(timeout: .seconds(60))
            #expect(status == 0, "\(get.standardError)")
            let data = try #require(FileManager.default.contents(atPath: mount.appendingPathComponent("big.bin").path))
            #expect(data.count == size)
            #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil)
            await origin.stop()
        }

        @Test("schedules: a bad rule is refused with the reason before anything starts")
        func badSchedule() async throws {
            let directory = TemporaryDirectory()
            let bad = try await ChildProcess.run(
                "haul",
                [
                    "serve", "--port", "0", "--secret", "x", "--state-dir", directory.file("state").path,
                    "--limit-rate-schedule", "Mon-Fry 08:00-18:00=2M, *=0",
                ])
            #expect(bad.status == 64, "\(bad.error)")
            #expect(bad.error.contains("'Mon-Fry'"), "\(bad.error)")
            let window = try await ChildProcess.run(
                "haul", ["run", "--state-dir", directory.file("state").path, "--pause-schedule", "Mon 25:00-26:00"])
            #expect(window.status == 64, "\(window.error)")
            #expect(window.error.contains("HH:MM-HH:MM"), "\(window.error)")
            // The same options from the config file.
            let config = directory.file("config")
            try Data("min-free-space = 0\nlimit-rate-schedule = \"Sat-Sun=1M, *=fast\"\n".utf8).write(to: config)
            let configured = try await ChildProcess.run(
                "haul", ["serve", "--port", "0", "--secret", "x", "--state-dir", directory.file("state").path],
                environment: ["HAUL_CONFIG": config.path])
            #expect(configured.status == 64, "\(configured.error)")
            #expect(configured.error.contains("'fast'"), "\(configured.error)")
        }
    }
}

extension RPC {
    /// `GET path` on the daemon, with `Authorization: Bearer` when `bearer` is given.
    func get(_ path: String, bearer: String? = nil) async throws -> (status: UInt, body: String) {
        var request = HTTPClientRequest(url: endpoint.replacingOccurrences(of: "/jsonrpc", with: path))
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 8 << 20)
        return (response.status.code, String(buffer: body))
    }

    /// Waits until `gid`'s status is `status` (30 s at most).
    func waitForStatus(_ gid: String, _ status: String) async throws {
        let start = ContinuousClock.now
        while start.duration(to: .now) < .seconds(30) {
            let answer = try await call("aria2.tellStatus", [gid, ["status"]]) as? [String: Any]
            if answer?["status"] as? String == status { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("\(gid) never became \(status)")
    }
}

/// Prometheus's text format read by the `prometheus_client` parser from PyPI (in `.build/python-venv`).
enum PrometheusParser {
    static let python: String? = {
        let local = FileManager.default.currentDirectoryPath + "/.build/python-venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: local) else { return nil }
        let check = Process()
        check.executableURL = URL(fileURLWithPath: local)
        check.arguments = ["-c", "import prometheus_client.parser"]
        check.standardError = FileHandle.nullDevice
        guard (try? check.run()) != nil else { return nil }
        check.waitUntilExit()
        return check.terminationStatus == 0 ? local : nil
    }()

    /// Every sample as `name{label=value,…}` (labels sorted) → value.
    static func parse(_ text: String) async throws -> [String: Double] {
        let python = try #require(Self.python)
        let script = """
            import sys
            from prometheus_client.parser import text_string_to_metric_families
            for family in text_string_to_metric_families(sys.stdin.read()):
                for s in family.samples:
                    labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                    print(f"{s.name}{{{labels}}}\\t{s.value!r}" if labels else f"{s.name}\\t{s.value!r}")
            """
        let child = try ChildProcess(
            executable: URL(fileURLWithPath: python), arguments: ["-c", script], standardInput: text)
        let status = try await child.wait(timeout: .seconds(30))
        #expect(status == 0, "the parser refused the text: \(child.standardError)\n\(text)")
        var samples: [String: Double] = [:]
        for line in child.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: "\t")
            guard parts.count == 2, let value = Double(parts[1]) else { continue }
            samples[String(parts[0])] = value
        }
        return samples
    }

    static func parseIfAvailable(_ text: String) async throws -> [String: Double]? {
        python == nil ? nil : try await parse(text)
    }
}
