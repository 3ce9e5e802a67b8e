import Foundation
import HaulTestSupport
import Logging
import Testing

@testable import HaulEvents
@testable import HaulKit

/// The pure parts of delivery: backoff, signature, payload, the hooks' arguments; and a hook run for real.
@Suite("Event delivery")
struct EventDeliveryTests {
    static let event = OutboxEvent(
        sequence: 7, eventID: "e1", target: "hook", downloadID: 300, kind: .complete, url: "http://a/x.bin",
        file: "/d/x.bin", size: 1234, sha256: String(repeating: "b", count: 64), errorCode: nil, error: nil,
        createdAt: Date(timeIntervalSince1970: 1_700_000_000.5), attempts: 0)

    @Test(
        "backoff doubles from 1 s, is capped, and jitter takes at most half",
        arguments: [
            (1, 0.0, 1.0), (2, 0.0, 2.0), (3, 0.0, 4.0), (9, 0.0, 256.0), (10, 0.0, 300.0), (50, 0.0, 300.0),
            (1, 1.0, 0.5), (10, 0.5, 225.0), (0, 0.0, 1.0),
        ])
    func backoff(attempts: Int, jitter: Double, seconds: Double) {
        let delay = DeliveryBackoff().delay(afterAttempts: attempts, jitter: jitter)
        #expect(abs(delay.seconds - seconds) < 0.002, "\(delay)")
    }

    @Test("an event is given up only past the horizon")
    func horizon() {
        var backoff = DeliveryBackoff()
        backoff.horizon = .seconds(60)
        let created = Date(timeIntervalSince1970: 0)
        #expect(!backoff.givesUp(created: created, next: created.addingTimeInterval(59)))
        #expect(backoff.givesUp(created: created, next: created.addingTimeInterval(61)))
    }

    @Test("the signature is HMAC-SHA256 in hex (RFC 4231 test case 2)")
    func signature() {
        #expect(
            WebhookSender.signature(of: Data("what do ya want for nothing?".utf8), secret: "Jefe")
                == "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("the payload names the event, the download's id and GID, its file, size and digest")
    func payload() throws {
        let body = try EventPayload(Self.event).body()
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(json["id"] as? String == "e1")
        #expect(json["event"] as? String == "complete")
        #expect(json["time"] as? String == "2023-11-14T22:13:20.500Z")
        let download = try #require(json["download"] as? [String: Any])
        #expect(download["id"] as? Int == 300)
        #expect(download["gid"] as? String == "000000000000012c")
        #expect(download["file"] as? String == "/d/x.bin")
        #expect(download["size"] as? Int == 1234)
        #expect(download["error"] == nil)
    }

    @Test("a stop hook stands in for completion and error hooks, as aria2's does")
    func stopHookFallback() {
        var settings = EventSettings()
        settings.hooks = [.stop: "/bin/true", .error: "/bin/false"]
        #expect(settings.command(for: .complete) == "/bin/true")
        #expect(settings.command(for: .error) == "/bin/false")
        #expect(settings.command(for: .start) == nil)
        #expect(settings.hookKinds == [.stop, .complete, .error])
        #expect(settings.aria2Options == ["on-download-stop": "/bin/true", "on-download-error": "/bin/false"])
    }

    @Test("a hook gets aria2's arguments and the HAUL_ variables, and is killed at its time limit")
    func hookRuns() async throws {
        let directory = TemporaryDirectory()
        let script = directory.file("hook.sh")
        let record = directory.file("record")
        try """
        #!/bin/sh
        { echo "$#|$1|$2|$3"; echo "$HAUL_ID|$HAUL_URL|$HAUL_FILE|$HAUL_SIZE|$HAUL_SHA256|${HAUL_ERROR_CODE-unset}"; } \
            > \(record.path)
        echo "said something"
        [ "$HAUL_EVENT" = complete ] || exec sleep 60
        """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        // A generous limit for the run that must finish (a loaded machine starts processes slowly), a short one for
        // the run that must be killed.
        let runner = HookRunner(timeout: .seconds(20), logger: Logger(label: "test"))
        #expect(await runner.run(script.path, for: Self.event) == .exited(status: 0))
        let lines = try String(contentsOf: record, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "3|000000000000012c|1|/d/x.bin")
        #expect(lines.last == "300|http://a/x.bin|/d/x.bin|1234|\(String(repeating: "b", count: 64))|unset")

        var paused = Self.event
        paused.kind = .pause
        let started = ContinuousClock.now
        let impatient = HookRunner(timeout: .milliseconds(500), logger: Logger(label: "test"))
        #expect(await impatient.run(script.path, for: paused) == .timedOut)
        // Killed at its limit, long before its own end (60 s); the bound leaves room for a loaded machine.
        #expect(started.duration(to: .now) < .seconds(20), "killed after 0.5 s, not after its 60 s")
        #expect(await runner.run(directory.file("missing").path, for: paused) != .exited(status: 0))
    }
}
