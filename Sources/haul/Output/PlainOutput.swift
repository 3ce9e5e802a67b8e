import Foundation
import HaulKit

/// A few plain lines per download (started, restarted, done or failed): for logs and pipes. Quiet: errors only.
final class PlainOutput: SessionOutput {
    private let quiet: Bool

    init(quiet: Bool) { self.quiet = quiet }

    func changed(_ entry: TransferEntry, by change: DownloadEvent.Change, in table: TransferTable) {
        if case .status(.failed(let error)) = change {
            Console.error(Self.failure(of: entry, error))
            return
        }
        guard !quiet, let line = Self.line(for: entry, change) else { return }
        Console.status(line + "\n")
    }

    func tick(_ table: TransferTable) {}

    func finish(_ table: TransferTable, outcome: SessionOutcome) {
        if outcome.interrupted { Console.error("interrupted; \(outcome.resumeHint) to resume") }
    }

    /// What a failed download's error line says: which download (its id and URL: in a list of thousands, a network
    /// failure names neither), then the error.
    static func failure(of entry: TransferEntry, _ error: DownloadError) -> String {
        "#\(entry.id) \(entry.url): \(error.description)"
    }

    /// The line for a change worth a line, or nil.
    static func line(for entry: TransferEntry, _ change: DownloadEvent.Change) -> String? {
        switch change {
        case .status(.running):
            let resuming = entry.received > 0 ? " (resuming at \(ByteFormat.size(entry.received)))" : ""
            return "haul: #\(entry.id) getting \(entry.url)\(resuming)"
        case .status(.paused):
            return "haul: #\(entry.id) paused by another haul command; 'haul resume \(entry.id)' continues it"
        case .status(.removed) where entry.removed:
            return "haul: #\(entry.id) removed by another haul command"
        case .waitingForSpace(let shortage?):
            return "haul: #\(entry.id) \(shortage); it goes on by itself once there is room"
        case .waitingForSpace(nil):
            return "haul: #\(entry.id) there is room again: going on"
        case .restarted(let reason):
            return "haul: #\(entry.id) starting over: \(reason.explanation)"
        case .mirrorDropped(let url, let reason):
            return "haul: #\(entry.id) no longer using the mirror \(url.absoluteString): \(reason)"
        case .fileChanged(let how, let action):
            let file = entry.file?.path ?? entry.url
            let doing =
                switch action {
                case .checkingItsBytes: "reading it back (it is downloaded again if its bytes differ)"
                case .fetchingAgain: "downloading it again (it is replaced once the new copy is complete)"
                case .resumingFromItsBytes: "resuming from its bytes, then checking the whole file"
                }
            return "haul: #\(entry.id) \(file) \(how): \(doing)"
        case .retrying(let error, let attempt, let delay):
            return
                "haul: #\(entry.id) retrying in \(ByteFormat.duration(delay.seconds)) (attempt \(attempt)): \(error.summary)"
        case .status(.completed(let file)):
            if entry.wasAlreadyComplete {
                return "haul: #\(entry.id) \(file.path) is already complete (\(ByteFormat.size(entry.received)))"
            }
            if entry.verification == nil, entry.transferred == 0 {
                // Nothing fetched and nothing verified: the file that was there is kept (--no-clobber, or -N with
                // no newer copy on the server); every file Haul fetches says what it was verified against.
                return
                    "haul: #\(entry.id) kept \(file.path) as it was (\(ByteFormat.size(entry.received))): not downloaded"
            }
            let rate = entry.averageBytesPerSecond.map { ", \(ByteFormat.rate($0))" } ?? ""
            let time = entry.seconds.map { " in \(ByteFormat.duration($0))" } ?? ""
            let verified = entry.verification.map { "; \($0)" } ?? ""
            return "haul: #\(entry.id) saved \(file.path): \(ByteFormat.size(entry.received))\(time)\(rate)\(verified)"
        default:
            return nil
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
