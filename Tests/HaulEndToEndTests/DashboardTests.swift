import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// The dashboard of `haul serve` in a real browser: headless Chromium driven by selenium
    /// (`tools/browser/dashboard_check.py`).
    @Suite(
        "the dashboard in Chromium",
        .enabled(
            if: Browser.isAvailable,
            "chromium, chromium-driver or selenium (in .build/python-venv) is missing (.ci/run installs them)"))
    struct DashboardTests {
        @Test("no rows without the secret; rows that move; pause, resume, remove and add from the page; no errors")
        func dashboard() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let (daemon, port) = try await EndToEnd.Aria2pTests.serve(directory)
            let base = "http://127.0.0.1:\(port)"
            let finished = origin.serve("/finished.bin", size: 100_000)
            let finishedGID = try await Self.add(base, finished.absoluteString)
            try await Self.waitForStatus(base, finishedGID, "complete")
            origin.setFaults { $0.bytesPerSecond = 300_000 }
            let running = origin.serve("/running.bin", size: 60_000_000)
            let runningGID = try await Self.add(base, running.absoluteString)
            try await Self.waitForStatus(base, runningGID, "active")

            var environment: [String: String] = [:]
            if let screenshot = ProcessInfo.processInfo.environment["HAUL_SCREENSHOT"] {
                environment["HAUL_SCREENSHOT"] = screenshot
            }
            let check = try ChildProcess(
                executable: Browser.python,
                arguments: [
                    Browser.script, base, EndToEnd.Aria2pTests.secret, runningGID, finishedGID,
                    origin.serve("/added-1.bin", size: 1_000).absoluteString,
                    origin.serve("/added-2.bin", size: 1_000).absoluteString,
                ], environment: environment)
            let status = try await check.wait(timeout: .seconds(180))
            #expect(status == 0, "\(check.standardOutput)\n\(check.standardError)\(Browser.describe(daemon))")
            daemon.send(SIGTERM)
            _ = try await daemon.wait(timeout: .seconds(30))
            await origin.stop()
        }

        /// Posts `body` with curl (Foundation's networking is not used in tests).
        static func post(_ base: String, _ body: String) async throws -> String {
            let curl = try ChildProcess(
                executable: URL(fileURLWithPath: "/usr/bin/curl"),
                arguments: ["-s", "-X", "POST", base + "/jsonrpc", "--data-binary", body])
            _ = try await curl.wait(timeout: .seconds(30))
            return curl.standardOutput
        }

        static func add(_ base: String, _ url: String) async throws -> String {
            let body =
                #"{"jsonrpc":"2.0","id":"d","method":"aria2.addUri","params":["token:\#(EndToEnd.Aria2pTests.secret)",["\#(url)"]]}"#
            let answer = try await post(base, body)
            guard let range = answer.range(of: #""result":""#) else {
                Issue.record("addUri failed: \(answer)")
                throw CancellationError()
            }
            return String(answer[range.upperBound...].prefix(16))
        }

        static func waitForStatus(_ base: String, _ gid: String, _ status: String) async throws {
            let body =
                #"{"jsonrpc":"2.0","id":"d","method":"aria2.tellStatus","params":["token:\#(EndToEnd.Aria2pTests.secret)","\#(gid)",["status"]]}"#
            let start = ContinuousClock.now
            while start.duration(to: .now) < .seconds(30) {
                if try await post(base, body).contains(#""\#(status)""#) { return }
                try await Task.sleep(for: .milliseconds(50))
            }
            Issue.record("\(gid) did not become \(status)")
        }
    }
}

/// What the browser tests need: Debian's chromium and chromium-driver, and selenium in `.build/python-venv`.
enum Browser {
    static let python = URL(
        fileURLWithPath: FileManager.default.currentDirectoryPath + "/.build/python-venv/bin/python")
    static let script = FileManager.default.currentDirectoryPath + "/tools/browser/dashboard_check.py"

    /// The path of one of the dashboard's browser checks in `tools/browser`.
    static func script(_ name: String) -> String {
        FileManager.default.currentDirectoryPath + "/tools/browser/\(name)"
    }

    /// Runs a browser check to its end and records its output as the failure when it fails, with what became of
    /// `daemon` (the page it serves was once refused a connection, with no word of why).
    static func check(
        _ name: String, _ arguments: [String], daemon: ChildProcess? = nil, timeout: Duration = .seconds(240)
    ) async throws {
        var environment: [String: String] = [:]
        for name in ["HAUL_SCREENSHOT", "HAUL_DASHBOARD_SOAK_SECONDS"] {
            if let value = ProcessInfo.processInfo.environment[name] { environment[name] = value }
        }
        let check = try ChildProcess(
            executable: python, arguments: [script(name)] + arguments, environment: environment)
        let status = try await check.wait(timeout: timeout)
        #expect(status == 0, "\(check.standardOutput)\n\(check.standardError)\(daemon.map(Self.describe) ?? "")")
        print(check.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("ok:") }.joined(separator: "\n"))
    }

    /// Whether `daemon` still runs, and what it wrote on its standard error.
    static func describe(_ daemon: ChildProcess) -> String {
        let process = daemon.process
        let state =
            process.isRunning
            ? "still running" : "ended (status \(process.terminationStatus), \(process.terminationReason))"
        return "\nthe daemon: \(state); its standard error:\n\(daemon.standardError.suffix(4_000))"
    }

    /// `haul serve` on `port` (0: a free one) over `directory`, with `arguments` besides; returns it and its port.
    static func serve(
        _ directory: TemporaryDirectory, port: Int = 0, _ arguments: [String] = []
    ) async throws -> (
        ChildProcess, Int
    ) {
        let child = try ChildProcess(product: "haul", arguments: serveArguments(directory, port: port) + arguments)
        return (child, try await ServeStartup.port(of: child))
    }

    static func serveArguments(_ directory: TemporaryDirectory, port: Int) -> [String] {
        [
            "serve", "--port", String(port), "--secret", EndToEnd.Aria2pTests.secret, "-d",
            directory.file("downloads").path, "--state-dir", directory.file("state").path,
        ]
    }

    static let isAvailable: Bool = {
        let files = FileManager.default
        guard files.isExecutableFile(atPath: "/usr/bin/chromium"),
            files.isExecutableFile(atPath: "/usr/bin/chromedriver"),
            files.isExecutableFile(atPath: python.path), files.isExecutableFile(atPath: "/usr/bin/curl")
        else { return false }
        let lib = FileManager.default.currentDirectoryPath + "/.build/python-venv/lib"
        let versions = (try? files.contentsOfDirectory(atPath: lib)) ?? []
        return versions.contains { files.fileExists(atPath: "\(lib)/\($0)/site-packages/selenium") }
    }()
}

extension Browser {
    /// Whether axe-selenium-python (axe-core for selenium) is in the virtual environment too.
    static let hasAxe: Bool = {
        let lib = FileManager.default.currentDirectoryPath + "/.build/python-venv/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        return isAvailable
            && versions.contains {
                FileManager.default.fileExists(atPath: "\(lib)/\($0)/site-packages/axe_selenium_python")
            }
    }()
}
