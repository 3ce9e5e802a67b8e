import HaulKit

/// How a foreground session (`haul get`, `haul run`) shows its downloads: plain lines, live bars or JSON.
///
/// All calls come from ``SessionDisplay``, under its lock: one at a time.
protocol SessionOutput: AnyObject {
    /// A followed download changed.
    func changed(_ entry: TransferEntry, by change: DownloadEvent.Change, in table: TransferTable)
    /// Called about ten times a second.
    func tick(_ table: TransferTable)
    /// The session is over; print what is left to print.
    func finish(_ table: TransferTable, outcome: SessionOutcome)
}

/// How a foreground session ended.
struct SessionOutcome: Sendable {
    var exitCode: Int32
    var interrupted: Bool
    /// What to run to continue, e.g. "run the same command again".
    var resumeHint: String
}

extension RestartReason {
    /// Why a download started over, in words.
    var explanation: String {
        switch self {
        case .serverIgnoredRange: "the server does not support resuming (it sent the whole file)"
        case .resourceChanged: "the file changed on the server"
        case .contentMismatch: "the bytes on disk differ from the server's"
        case .rangeMismatch: "the server sent the wrong part of the file"
        case .checksumMismatch: "the checksum did not match"
        }
    }
}
