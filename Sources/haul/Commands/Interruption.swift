import Foundation
import HaulKit
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ctrl-C, SIGTERM and SIGHUP (a closed terminal): checkpoint and stop cleanly, so the command can print its summary and exit 130. A second
/// signal exits at once (still safe: every byte written is kept, and the next run verifies the tail).
final class Interruption: Sendable {
    /// Stops what the command runs (the manager's downloads, or a stream).
    private let stop: @Sendable () async -> Void
    private let signals = Atomic<Int>(0)
    private nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    private static let queue = DispatchQueue(label: "haul.signals")

    /// True once a SIGINT or SIGTERM arrived.
    var happened: Bool { signals.load(ordering: .relaxed) > 0 }

    init(manager: DownloadManager) { stop = { await manager.shutdown() } }

    /// Calls `stop` on the first signal.
    init(stopping stop: @escaping @Sendable () async -> Void) { self.stop = stop }

    func install() {
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: Self.queue)
            source.setEventHandler { [self, stop] in
                if self.signals.add(1, ordering: .relaxed).newValue > 1 {
                    Console.status("\n")
                    exit(ExitStatus.interrupted.rawValue)
                }
                Task { await stop() }
                // Should stopping hang (a disk that does not answer), do not hang with it.
                Self.queue.asyncAfter(deadline: .now() + 20) { exit(ExitStatus.interrupted.rawValue) }
            }
            source.resume()
            Self.queue.sync { Self.sources.append(source) }
        }
    }
}
