import Foundation
import HTTPTypes
import HaulTestSupport
import HummingbirdTesting
import NIOCore
import Testing

@testable import HaulKit
@testable import HaulServer

/// `/metrics`, `/healthz` and `/readyz` in process (docs/service.md); Prometheus's own parser reads `/metrics` in
/// `ServiceCommandTests`.
@Suite("Metrics and health")
struct MonitoringTests {
    static let token = "metrics-only"

    /// The harness's daemon again, with a metrics token.
    static func harness() async throws -> DaemonHarness {
        let plain = try await DaemonHarness.make()
        let daemon = try HaulDaemon(
            configuration: plain.daemon.configuration, manager: plain.manager,
            monitoring: HaulDaemon.Monitoring(metricsToken: token))
        return DaemonHarness(directory: plain.directory, origin: plain.origin, manager: plain.manager, daemon: daemon)
    }

    static func get(
        _ client: any TestClientProtocol, _ path: String, bearer: String? = nil
    ) async throws -> (status: Int, body: String, headers: HTTPFields) {
        var headers: HTTPFields = [:]
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        return try await client.execute(uri: path, method: .get, headers: headers) { response in
            (Int(response.status.code), String(buffer: response.body), response.headers)
        }
    }

    @Test("/metrics needs the secret or the metrics token as a Bearer token; the metrics token calls no RPC")
    func access() async throws {
        let harness = try await Self.harness()
        try await harness.test { client in
            let none = try await Self.get(client, "/metrics")
            #expect(none.status == 401)
            #expect(none.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
            #expect(try await Self.get(client, "/metrics", bearer: "wrong").status == 401)
            #expect(try await Self.get(client, "/metrics", bearer: Self.token).status == 200)
            let bySecret = try await Self.get(client, "/metrics", bearer: DaemonHarness.secret)
            #expect(bySecret.status == 200)
            #expect(bySecret.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let rpc = try await client.rpc("aria2.getGlobalStat", token: Self.token)
            #expect(rpc.errorMessage == "Unauthorized", "the metrics token is not the RPC secret")
        }
    }

    @Test("series: downloads by state, bytes, RPC latency by method, the store's probe")
    func series() async throws {
        let harness = try await Self.harness()
        let url = harness.origin.serve("/a.bin", size: 123_457)
        try await harness.test { client in
            let added = try await client.rpc("aria2.addUri", [.array([.string(url.absoluteString)])])
            let gid = try #require(added.result?.stringValue)
            _ = try await client.waitForStatus(gid, "complete")
            _ = try await client.rpc("no.such.method")
            let text = try await Self.get(client, "/metrics", bearer: Self.token).body
            #expect(text.contains("haul_downloads{state=\"completed\"} 1.0"), "\(text)")
            #expect(text.contains("haul_downloads{state=\"running\"} 0.0"))
            #expect(text.contains("haul_received_bytes_total 123457"))
            #expect(text.contains("haul_host_received_bytes_total{host=\"127.0.0.1\"} 123457"))
            #expect(text.contains("haul_rpc_duration_seconds_count{method=\"aria2.addUri\"} 1"))
            #expect(text.contains("haul_rpc_duration_seconds_count{method=\"other\"} 1"), "unknown names are bounded")
            #expect(text.contains("haul_store_up 1.0"))
            #expect(text.contains("haul_store_duration_seconds_count{operation=\"probe\"} 1"))
        }
    }

    @Test("/healthz and /readyz answer without a token")
    func health() async throws {
        let harness = try await Self.harness()
        try await harness.test { client in
            let alive = try await Self.get(client, "/healthz")
            #expect(alive.status == 200 && alive.body == "ok\n")
            let ready = try await Self.get(client, "/readyz")
            #expect(ready.status == 200 && ready.body == "ready\n")
        }
    }

    @Test("the dashboard's header says what the schedules do")
    func scheduleNote() async throws {
        let plain = try await DaemonHarness.make()
        var runner = ScheduleRunner(
            rates: DownloadSchedule(rules: [], fallback: 2 << 20),
            pauses: DownloadSchedule(rules: [], fallback: false))
        runner.calendar = Calendar(identifier: .gregorian)
        let service = Aria2Service(
            manager: plain.manager, downloadDirectory: plain.downloads, requestShutdown: {}, schedule: runner)
        #expect(await service.scheduleNote() == nil, "nothing applied yet")
        await runner.apply(at: Date(), to: plain.manager)
        #expect(await service.scheduleNote() == "limit 2.0 MiB/s by schedule")
        #expect(await plain.manager.globalSpeedLimit == 2 << 20)
        let held = ScheduleRunner(pauses: DownloadSchedule(rules: [], fallback: true))
        let holding = Aria2Service(
            manager: plain.manager, downloadDirectory: plain.downloads, requestShutdown: {}, schedule: held)
        await held.apply(at: Date(), to: plain.manager)
        #expect(await holding.scheduleNote() == "paused by schedule")
        #expect(await plain.manager.isHoldingDownloads)
        await plain.stop()
    }

    @Test("the host label set is bounded: the first hosts get their own label, the others count as other")
    func boundedHosts() throws {
        let metrics = DaemonMetrics()
        for number in 0..<(DaemonMetrics.labelledHosts + 5) {
            let id = DownloadID(rawValue: Int64(number + 1))
            let snapshot = DownloadSnapshot(
                id: id, url: URL(string: "http://h\(number).example/f")!, finalURL: nil, state: .running,
                progress: DownloadProgress(receivedBytes: 0, expectedBytes: 10), file: nil, lastError: nil,
                options: DownloadOptions(), createdAt: Date(), startedAt: nil, completedAt: nil)
            metrics.record(DownloadEvent(id: id, change: .added(snapshot)))
            metrics.record(
                DownloadEvent(id: id, change: .progress(DownloadProgress(receivedBytes: 10, expectedBytes: 10))))
        }
        let text = metrics.registry.emitToString()
        #expect(text.contains("haul_host_received_bytes_total{host=\"h19.example\"} 10"))
        #expect(!text.contains("h20.example"))
        #expect(text.contains("haul_host_received_bytes_total{host=\"other\"} 50"))
        #expect(text.contains("haul_received_bytes_total 250"))
    }
}
