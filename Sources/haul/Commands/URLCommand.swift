import Foundation
import HaulKit
import Synchronization

/// `--url-command CMD`: asked for a fresh URL when a download's URL expires. CMD runs with `/bin/sh -c`, with
/// `HAUL_URL` (the URL the download was added with), `HAUL_REFUSED_URL`, `HAUL_STATUS` and `HAUL_ID` in its
/// environment; the first line it prints is the fresh URL. It has a minute; a failure or no URL fails the download.
struct URLCommand: Sendable {
    let command: String
    static let timeout: Duration = .seconds(60)

    var provider: URLProvider {
        { [command] request in await Self.run(command, for: request) }
    }

    private static func run(_ command: String, for request: URLRefresh) async -> URL? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["HAUL_URL"] = request.url.absoluteString
        environment["HAUL_REFUSED_URL"] = request.refusedURL.absoluteString
        environment["HAUL_STATUS"] = String(request.status)
        environment["HAUL_ID"] = String(request.id.rawValue)
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        /// Whether it ended, and who waits for that.
        let exit = Mutex<(ended: Bool, waiting: CheckedContinuation<Void, Never>?)>((false, nil))
        process.terminationHandler = { _ in
            exit.withLock { state in
                state.ended = true
                return state.waiting.take()
            }?.resume()
        }
        do {
            try process.run()
        } catch {
            Console.error("haul: --url-command could not start: \(error.localizedDescription)")
            return nil
        }
        let killer = Task {
            try? await Task.sleep(for: timeout)
            if process.isRunning {
                Console.error("haul: --url-command gave no URL within \(timeout.components.seconds) s; stopping it")
                process.terminate()
            }
        }
        // Read while it runs (a full pipe would block it), then wait for the end.
        let data = await Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
        await withCheckedContinuation { continuation in
            let ended = exit.withLock { state in
                if !state.ended { state.waiting = continuation }
                return state.ended
            }
            if ended { continuation.resume() }
        }
        killer.cancel()
        guard process.terminationStatus == 0 else {
            Console.error("haul: --url-command exited with status \(process.terminationStatus)")
            return nil
        }
        let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard let line, let url = URL(string: line), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme), url.host != nil
        else {
            Console.error("haul: --url-command printed no http or https URL")
            return nil
        }
        return url
    }
}
