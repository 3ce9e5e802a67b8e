import Foundation
import HaulKit
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ctrl-C and SIGTERM: checkpoint and stop cleanly, so the command can print its summary and exit 130. A second
/// signal exits at once (still safe: every byte written is kept, and the next run verifies the tail).
final class Interruption: Sendable {
    private let manager: DownloadManager
    private let signals = Atomic<Int>(0)
    private nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    private static let queue = DispatchQueue(label: "haul.signals")

    /// True once a SIGINT or SIGTERM arrived.
    var happened: Bool { signals.load(ordering: .relaxed) > 0 }

    init(manager: DownloadManager) { self.manager = manager }

    func install() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: Self.queue)
            source.setEventHandler { [self, manager] in
                if self.signals.add(1, ordering: .relaxed).newValue > 1 {
                    Console.out("\n")
                    exit(ExitStatus.interrupted.rawValue)
                }
                Task { await manager.shutdown() }
                // Should stopping hang (a disk that does not answer), do not hang with it.
                Self.queue.asyncAfter(deadline: .now() + 20) { exit(ExitStatus.interrupted.rawValue) }
            }
            source.resume()
            Self.queue.sync { Self.sources.append(source) }
        }
    }
}
