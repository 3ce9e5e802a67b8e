import Foundation
import HaulKit

/// One JSON object per line on standard output (NDJSON) for each event, then one summary object. The shapes are
/// documented in the README; fields without a value are left out.
final class JSONOutput: SessionOutput {
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    func changed(_ entry: TransferEntry, by change: DownloadEvent.Change, in table: TransferTable) {
        var record = JSONRecord(type: "", id: entry.id.rawValue)
        switch change {
        case .added(let snapshot):
            record.type = "added"
            record.url = entry.url
            record.file = entry.file?.path
            record.state = snapshot.state.rawValue
        case .status(.running):
            record.type = "started"
            record.url = entry.url
            record.resumedFrom = entry.resumedFrom
            record.totalBytes = entry.expected
        case .status(.queued):
            record.type = "queued"
        case .status(.paused):
            record.type = "paused"
        case .status(.removed):
            record.type = "removed"
        case .status(.interrupted):
            record.type = "interrupted"
        case .status(.completed(let file)):
            record.type = "completed"
            record.file = file.path
            record.bytes = entry.received
            record.seconds = entry.wasAlreadyComplete ? nil : entry.seconds.map(Self.milliseconds)
            record.alreadyComplete = entry.wasAlreadyComplete
            record.verification = entry.verification.map(JSONRecord.Verification.init)
        case .status(.failed(let error)):
            record.type = "failed"
            record.error = .init(error)
            Console.error(PlainOutput.failure(of: entry, error))
        case .progress(let progress):
            record.type = "progress"
            record.receivedBytes = progress.receivedBytes
            record.totalBytes = progress.expectedBytes
            record.bytesPerSecond = progress.bytesPerSecond.rounded()
            record.connections = progress.activeConnections
        case .restarted(let reason):
            record.type = "restarted"
            record.reason = reason.rawValue
        case .mirrorDropped(let url, let reason):
            record.type = "mirrorDropped"
            record.url = url.absoluteString
            record.reason = reason
        case .fileChanged(let how, let action):
            record.type = "fileChanged"
            record.file = entry.file?.path
            record.reason = how
            record.action = action.rawValue
        case .verified:
            return
        case .waitingForSpace(let shortage):
            record.type = shortage == nil ? "spaceAvailable" : "waitingForSpace"
            record.reason = shortage?.description
        case .connections(let count, let reason):
            record.type = "connections"
            record.connections = count
            record.reason = reason
        case .retrying(let error, let attempt, let delay):
            record.type = "retrying"
            record.attempt = attempt
            record.delaySeconds = Self.milliseconds(delay.seconds)
            record.error = .init(error)
        }
        emit(record)
    }

    func tick(_ table: TransferTable) {}

    func finish(_ table: TransferTable, outcome: SessionOutcome) {
        let entries = table.all
        var summary = JSONRecord(type: "summary")
        summary.exitCode = outcome.exitCode
        summary.interrupted = outcome.interrupted
        summary.completed = entries.filter { $0.state == .completed }.count
        summary.failed = entries.filter { $0.state == .failed }.count
        summary.downloads = entries.map { entry in
            var item = JSONRecord(type: "download", id: entry.id.rawValue)
            item.url = entry.url
            item.file = entry.file?.path
            item.state = entry.removed ? "removed" : entry.state.rawValue
            item.bytes = entry.received
            item.totalBytes = entry.expected
            item.seconds = entry.wasAlreadyComplete ? nil : entry.seconds.map(Self.milliseconds)
            item.alreadyComplete = entry.wasAlreadyComplete ? true : nil
            item.error = entry.error.map(JSONRecord.ErrorInfo.init)
            item.verification = entry.verification.map(JSONRecord.Verification.init)
            item.sources =
                entry.sources.isEmpty
                ? nil : entry.sources.map { .init(url: $0.url.absoluteString, bytes: $0.bytes) }
            return item
        }
        emit(summary)
        if outcome.interrupted { Console.error("interrupted; \(outcome.resumeHint) to resume") }
    }

    /// Seconds rounded to the millisecond.
    static func milliseconds(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    private func emit(_ record: JSONRecord) {
        guard let data = try? encoder.encode(record) else { return }
        Console.out(String(decoding: data, as: UTF8.self) + "\n")
    }
}

/// One line of `--json` output.
struct JSONRecord: Encodable {
    /// An error: its stable `code` (``DownloadError/Code``) and that code's `name`, the status `haul` would exit
    /// with for it alone (docs/errors.md has the table), what happened and what to do.
    struct ErrorInfo: Encodable {
        var code: Int
        var name: String
        var exitStatus: Int32
        var summary: String
        var suggestion: String
        var transient: Bool
        var httpStatus: Int?

        init(_ error: DownloadError) {
            code = error.code.rawValue
            name = error.code.name
            exitStatus = ExitStatus.forFailure(error).rawValue
            summary = error.summary
            suggestion = error.suggestion
            transient = error.isTransient
            httpStatus = error.httpStatus
        }
    }

    /// What a completed file was verified against: `verified`, each check (`sha-256 from the server (Repr-Digest)`)
    /// and the sentence shown.
    struct Verification: Encodable {
        var verified: Bool
        var by: [String]
        var text: String

        init(_ verification: DownloadVerification) {
            verified = verification.isVerified
            by = verification.checks.map(\.description)
            text = verification.description
        }
    }

    var type: String
    var id: Int64?
    var url: String?
    var file: String?
    var state: String?
    var receivedBytes: Int64?
    var totalBytes: Int64?
    var bytesPerSecond: Double?
    var connections: Int?
    var resumedFrom: Int64?
    var bytes: Int64?
    var seconds: Double?
    var alreadyComplete: Bool?
    var reason: String?
    /// `fileChanged`: `checkingItsBytes`, `fetchingAgain` or `resumingFromItsBytes`.
    var action: String?
    var attempt: Int?
    var delaySeconds: Double?
    var error: ErrorInfo?
    var exitCode: Int32?
    var interrupted: Bool?
    var completed: Int?
    var failed: Int?
    var downloads: [JSONRecord]?
    var verification: Verification?
    /// The bytes each source served, largest first.
    var sources: [SourceBytes]?

    struct SourceBytes: Encodable {
        var url: String
        var bytes: Int64
    }
}
