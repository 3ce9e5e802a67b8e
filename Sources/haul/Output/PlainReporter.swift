import Foundation
import HaulKit

/// Prints a few plain lines per download (started, restarted, done or failed): for logs and pipes.
struct PlainReporter: Sendable {
    let quiet: Bool

    func report(_ events: AsyncStream<DownloadEvent>, of ids: Set<DownloadID>, manager: DownloadManager) async {
        var remaining = ids
        var started: [DownloadID: ContinuousClock.Instant] = [:]
        for await event in events where ids.contains(event.id) {
            switch event.change {
            case .status(.running):
                started[event.id] = started[event.id] ?? .now
                if !quiet, let snapshot = await manager.snapshot(event.id) {
                    print("haul: getting \(snapshot.url.absoluteString)")
                }
            case .restarted(let reason):
                if !quiet { print("haul: \(event.id): starting over (\(reason.rawValue))") }
            case .status(.completed(let file)):
                remaining.remove(event.id)
                if !quiet {
                    let size = await manager.snapshot(event.id)?.totalBytes ?? 0
                    let seconds = started[event.id].map { Self.seconds($0.duration(to: .now)) } ?? 0
                    let rate = seconds > 0 ? " (\(ByteFormat.rate(Double(size) / seconds)))" : ""
                    print("haul: saved \(file.path): \(ByteFormat.size(size)) in \(ByteFormat.duration(seconds))\(rate)")
                }
            case .status(.failed(let error)):
                remaining.remove(event.id)
                printError(error.description)
            default:
                break
            }
            if remaining.isEmpty { break }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
