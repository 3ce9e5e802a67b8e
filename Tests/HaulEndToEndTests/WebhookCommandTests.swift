import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// Webhooks and the durable outbox: a daemon killed after a completion, a receiver that is down for a while.
    @Suite("Webhooks")
    struct WebhookCommandTests {
        /// The events a receiver got, de-duplicated by event id (first arrival kept), in arrival order.
        static func unique(_ receiver: WebhookReceiver) -> [(id: String, kind: String, download: Int)] {
            var seen = Set<String>()
            return receiver.deliveries.compactMap(\.event).filter { seen.insert($0.id).inserted }
        }

        /// Waits until `condition` holds (at most `timeout`).
        static func wait(
            _ timeout: Duration = .seconds(30), until condition: () async throws -> Bool
        ) async throws -> Bool {
            let start = ContinuousClock.now
            while start.duration(to: .now) < timeout {
                if try await condition() { return true }
                try? await Task.sleep(for: .milliseconds(25))
            }
            return try await condition()
        }

        static func serve(_ directory: TemporaryDirectory, _ extra: [String]) throws -> ChildProcess {
            try ChildProcess(
                product: "haul",
                arguments: [
                    "serve", "--port", "0", "--secret", "s", "-d", directory.file("downloads").path, "--state-dir",
                    directory.file("state").path,
                ] + extra)
        }

        @Test("SIGKILL right after a completion: the complete hook and webhook run after the restart, none lost")
        func killAfterCompletion() async throws {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/a.bin", size: 200_000)
            let receiver = try await WebhookReceiver.start()
            // Nothing is answered before the kill: no event can be settled by the first daemon.
            receiver.hold(true)
            let directory = TemporaryDirectory()
            // The first run of the hook blocks (the daemon dies meanwhile); the next ones record and exit.
            let hook = directory.file("hook.sh")
            let marks = directory.file("marks").path
            try """
            #!/bin/sh
            echo "ran $HAUL_EVENT $HAUL_EVENT_ID" >> \(marks)
            if [ ! -e \(marks).first ]; then echo $$ > \(marks).first; exec sleep 30; fi
            echo "done $HAUL_EVENT $HAUL_EVENT_ID" >> \(marks)
            """.write(to: hook, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook.path)
            let options = [
                "--on-download-complete", hook.path, "--webhook", receiver.url().absoluteString, "--webhook-secret",
                "k", "--webhook-timeout", "2", "--webhook-max-delay", "0.5",
            ]
            let first = try Self.serve(directory, options)
            let rpc = try await RPC(daemon: first, secret: "s")
            _ = try await rpc.call("aria2.addUri", [[url.absoluteString]])
            let file = directory.file("downloads/a.bin").path
            // Completed, the hook under way, the start webhook unanswered: kill.
            #expect(try await Self.wait { FileManager.default.fileExists(atPath: marks + ".first") })
            #expect(try await Self.wait { !receiver.deliveries.isEmpty })
            first.send(SIGKILL)
            _ = try await first.wait()
            try await rpc.shutdown()
            #expect(fileSize(file) == 200_000)
            #expect(!receiver.deliveries.contains { $0.event?.kind == "complete" }, "nothing settled before the kill")
            receiver.hold(false)

            let second = try Self.serve(directory, options)
            #expect(
                try await Self.wait { Self.unique(receiver).map(\.kind) == ["start", "complete"] },
                "\(Self.unique(receiver)) \(second.standardError)")
            #expect(
                try await Self.wait {
                    ((try? String(contentsOfFile: marks, encoding: .utf8)) ?? "").contains("done complete")
                })
            let lines = try String(contentsOfFile: marks, encoding: .utf8).split(separator: "\n")
            let completeID = try #require(Self.unique(receiver).last?.id)
            #expect(lines.filter { $0.hasPrefix("done complete") } == ["done complete \(completeID)"], "\(lines)")
            // Every delivery is signed; every copy of an event carries the same id.
            #expect(receiver.deliveries.allSatisfy { $0.isSigned(with: "k") })
            #expect(Set(receiver.deliveries.compactMap(\.event?.id)).count == 2)
            let body = try #require(receiver.deliveries.last { $0.event?.kind == "complete" }?.json)
            let download = try #require(body["download"] as? [String: Any])
            #expect(download["file"] as? String == file)
            #expect(download["size"] as? Int == 200_000)
            #expect(download["sha256"] as? String == TestContent.sha256(size: 200_000))
            second.send(SIGTERM)
            #expect(try await second.wait(timeout: .seconds(30)) == 0)
            // The first hook's `sleep 30`, if it still sleeps: once it has ended, its pid may be another process's.
            if let pid = Int32(
                (try? String(contentsOfFile: marks + ".first", encoding: .utf8))?.trimmingCharacters(
                    in: .whitespacesAndNewlines) ?? ""),
                let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
                command.hasPrefix("sleep")
            {
                kill(pid, SIGKILL)
            }
            await receiver.stop()
            await origin.stop()
        }

        @Test("a receiver down for the first seconds gets every event afterwards, in order per download")
        func receiverDownThenUp() async throws {
            let origin = try await TestOrigin.start()
            let urls = (0..<4).map { origin.serve("/f\($0).bin", size: 50_000 + $0) }
            origin.respond("/missing.bin", status: 404)
            let port = try WebhookReceiver.freePort()
            let directory = TemporaryDirectory()
            let daemon = try Self.serve(
                directory,
                [
                    "--webhook", "http://127.0.0.1:\(port)/hook", "--webhook-timeout", "1", "--webhook-max-delay",
                    "1",
                ])
            let rpc = try await RPC(daemon: daemon, secret: "s")
            for url in urls + [origin.url("/missing.bin")] {
                _ = try await rpc.call("aria2.addUri", [[url.absoluteString]])
            }
            let started = ContinuousClock.now
            // Everything finishes while nobody listens; the attempts fail and are tried again.
            #expect(
                try await Self.wait {
                    let stopped = try await rpc.call("aria2.tellStopped", [0, 10, ["status"]]) as? [[String: Any]]
                    return stopped?.count == 5
                })
            #expect(try await Self.wait { daemon.standardError.contains("tried again") })
            try await Task.sleep(until: started + .seconds(6))
            let receiver = try await WebhookReceiver.start(port: port)
            #expect(
                try await Self.wait { Self.unique(receiver).count == 10 },
                "\(Self.unique(receiver).map(\.kind)) \(daemon.standardError)")
            let events = Self.unique(receiver)
            for download in 1...5 {
                let kinds = events.filter { $0.download == download }.map(\.kind)
                #expect(kinds == ["start", download == 5 ? "error" : "complete"], "download \(download): \(kinds)")
            }
            // Retried deliveries say so.
            #expect(receiver.deliveries.contains { Int($0.headers["x-haul-delivery-attempt"] ?? "") ?? 0 > 1 })
            daemon.send(SIGTERM)
            #expect(try await daemon.wait(timeout: .seconds(30)) == 0)
            try await rpc.shutdown()
            await receiver.stop()
            await origin.stop()
        }

        @Test(
            "three workers on one PostgreSQL queue, one killed: each completion's webhook is delivered, not once per worker",
            .enabled(if: PostgresServer.binaries != nil, "PostgreSQL is not installed (.ci/run installs it)"))
        func fleetDeliversOnce() async throws {
            let postgres = try await PostgresServer.start()
            let database = try await postgres.makeDatabase()
            let origin = try await TestOrigin.start()
            let count = 18
            let urls = (0..<count).map { origin.serve("/f\($0).bin", size: 600_000) }
            origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
            let receiver = try await WebhookReceiver.start()
            let directory = TemporaryDirectory()
            let db = ["--database", database.absoluteString]
            #expect(try await ChildProcess.run("haul", ["add"] + db + urls.map(\.absoluteString)).status == 0)
            let workers = try (1...3).map { number in
                try ChildProcess(
                    product: "haul",
                    arguments: [
                        "run", "-q", "-j", "2", "-d", directory.file("w\(number)").path, "--worker-name", "w\(number)",
                        "--lease-timeout", "9", "--webhook", receiver.url().absoluteString, "--webhook-timeout", "2",
                    ] + db)
            }
            // Kill one worker once a few completions were announced.
            #expect(try await Self.wait { Self.unique(receiver).filter { $0.kind == "complete" }.count >= 3 })
            workers[0].send(SIGKILL)
            _ = try await workers[0].wait()
            // What the killed worker sent before it died may still be on its way to the receiver: a second for it.
            try await Task.sleep(for: .seconds(1))
            let deliveredAtKill = receiver.deliveries.count
            let announcedAtKill = Self.unique(receiver).filter { $0.kind == "complete" }.count
            #expect(announcedAtKill < count, "killed with work left")
            for worker in workers.dropFirst() {
                #expect(try await worker.wait(timeout: .seconds(120)) == 0, "\(worker.standardError)")
            }
            let completions = receiver.deliveries.compactMap(\.event).filter { $0.kind == "complete" }
            let byDownload = Dictionary(grouping: completions, by: \.download)
            #expect(byDownload.count == count, "every download's completion arrived: \(byDownload.keys.sorted())")
            #expect(byDownload.values.allSatisfy { Set($0.map(\.id)).count == 1 }, "one event per completion")
            // At least once, yet not once per worker: only a delivery the killed worker held may come twice, once more,
            // after its lease. It holds at most 8 (`--webhook` deliveries at once, each until its row is settled).
            var arrivals: [String: [Int]] = [:]
            for (index, delivery) in receiver.deliveries.enumerated() {
                if let event = delivery.event { arrivals[event.id, default: []].append(index) }
            }
            let repeated = arrivals.values.filter { $0.count > 1 }
            #expect(
                repeated.allSatisfy { $0.count == 2 && $0[0] < deliveredAtKill && $0[1] >= deliveredAtKill },
                "only deliveries made before the kill come again, once: \(repeated) (\(deliveredAtKill) at the kill)")
            #expect(repeated.count <= 8, "\(repeated.count) events delivered twice")
            await receiver.stop()
            await origin.stop()
            await postgres.stop()
        }
    }
}
