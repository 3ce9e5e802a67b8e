import ArgumentParser
import Foundation
import HaulKit
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul get URL -o -`: the file to standard output as it arrives, as curl and wget do (HaulKit's
/// ``DownloadManager/stream(_:options:progress:into:)``).
///
/// One connection, no part file; a dropped connection continues within the run, and a stream that failed is run
/// again from the start. Progress goes to standard error when it is a terminal.
struct StandardOutputStream {
    let url: URL
    let options: DownloadOptions
    let quiet: Bool
    /// Log lines go to standard error too: no progress line then.
    let logging: Bool

    func run(_ manager: DownloadManager) async throws -> Never {
        let started = ContinuousClock.now
        let meter = ProgressLine(enabled: !quiet && !logging && Console.isInteractive, started: started)
        let streaming = Task { [url, options] in
            try await manager.stream(url, options: options, progress: meter.update) { bytes in
                switch Console.writeAll(1, bytes) {
                case nil: break
                case EPIPE: throw ReaderGone()
                case let code?:
                    throw DownloadError.fileSystem(path: "standard output", reason: String(cString: strerror(code)))
                }
            }
        }
        let interruption = Interruption(stopping: { streaming.cancel() })
        interruption.install()
        let result = await streaming.result
        meter.clear()
        await manager.shutdown()
        if case .failure(is ReaderGone) = result {
            // The reader went away (`| head`): end as a program killed by SIGPIPE does, silently.
            signal(SIGPIPE, SIG_DFL)
            kill(getpid(), SIGPIPE)
        }
        switch result {
        case .success(let file):
            if !quiet {
                let seconds = ContinuousClock.now.seconds(since: started)
                let size = ByteFormat.size(meter.delivered)
                let rate = seconds > 0 ? ", \(ByteFormat.rate(Double(meter.delivered) / seconds))" : ""
                Console.status(
                    "haul: wrote \(file.finalURL.absoluteString) to standard output: \(size) in "
                        + "\(ByteFormat.duration(seconds))\(rate)\n")
            }
            throw ExitStatus.success
        case .failure(let error as DownloadError):
            Console.error(error.description)
            throw ExitStatus.forFailures([error])
        case .failure:
            Console.error("interrupted after \(ByteFormat.size(meter.delivered)); run the command again to start over")
            throw ExitStatus.interrupted
        }
    }

    /// Standard output's reader closed the pipe.
    struct ReaderGone: Error {}

    /// One line on standard error, redrawn at most ten times a second: bytes, percentage, speed.
    final class ProgressLine: Sendable {
        private struct State {
            var delivered: Int64 = 0
            var drawn: ContinuousClock.Instant?
            var visible = false
        }
        private let enabled: Bool
        private let started: ContinuousClock.Instant
        private let state = Mutex(State())

        init(enabled: Bool, started: ContinuousClock.Instant) {
            self.enabled = enabled
            self.started = started
        }

        var delivered: Int64 { state.withLock { $0.delivered } }

        func update(_ delivered: Int64, _ expected: Int64?) {
            let line: String? = state.withLock { state in
                state.delivered = delivered
                let now = ContinuousClock.now
                guard enabled, state.drawn.map({ $0.duration(to: now) >= .milliseconds(100) }) ?? true else {
                    return nil
                }
                state.drawn = now
                state.visible = true
                let seconds = now.seconds(since: started)
                var text = ByteFormat.size(delivered)
                if let expected, expected > 0 {
                    text += " of \(ByteFormat.size(expected)) (\(delivered * 100 / expected)%)"
                }
                if seconds > 0.5 { text += ", \(ByteFormat.rate(Double(delivered) / seconds))" }
                return "\r\u{1B}[K" + text
            }
            if let line { Console.status(line) }
        }

        /// Erases the line, if one was drawn.
        func clear() {
            if state.withLock({ $0.visible }) { Console.status("\r\u{1B}[K") }
        }
    }
}
