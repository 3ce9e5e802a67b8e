import Foundation
import HaulKit

/// One download as aria2 describes it (`tellStatus` and friends): every value a string, the keys aria2 clients read.
struct Aria2Status {
    /// aria2's piece size for HTTP downloads; Haul has no pieces, so progress is reported per megabyte.
    static let pieceLength: Int64 = 1 << 20

    /// aria2's name for a state: active, waiting, paused, complete, error; `removed` is kept by the service.
    static func name(of state: DownloadState) -> String {
        switch state {
        case .running: "active"
        case .queued: "waiting"
        case .paused: "paused"
        case .completed: "complete"
        case .failed: "error"
        }
    }

    /// aria2's exit status for a Haul error (its "EXIT STATUS" table), as clients show and compare it.
    static func errorCode(_ error: DownloadError?) -> String {
        guard let code = error?.code else { return "1" }
        let value: Int =
            switch code {
            case .stalled: 2
            case .httpClientError where error?.httpStatus == 404 || error?.httpStatus == 410: 3
            case .httpClientError where error?.httpStatus == 401 || error?.httpStatus == 403: 24
            case .tooSlow: 5
            case .networkFailure, .responseTruncated, .tlsFailure: 6
            case .resourceChanged, .serverIgnoredRange, .rangeMismatch, .resourceUnstable: 8
            case .diskFull: 9
            case .destinationInUse: 11
            case .destinationNotWritable: 16
            case .fileSystem: 17
            case .serverError, .httpClientError, .malformedResponse: 22
            case .tooManyRedirects, .redirectLoop: 23
            case .invalidURL, .invalidRequest: 28
            case .rateLimited: 29
            case .checksumMismatch: 32
            default: 1
            }
        return String(value)
    }

    /// The status object of `snapshot`, reported as `statusName`, with only `keys` (all when empty).
    static func object(
        _ snapshot: DownloadSnapshot, gid: GID, statusName: String, keys: [String], downloadDirectory: URL
    ) -> JSONValue {
        let total = snapshot.totalBytes ?? (snapshot.state == .completed ? snapshot.receivedBytes : 0)
        let completed = snapshot.state == .completed ? total : snapshot.receivedBytes
        let running = snapshot.state == .running
        var fields: [String: JSONValue] = [
            "gid": .string(gid.description),
            "status": .string(statusName),
            "totalLength": .string(String(total)),
            "completedLength": .string(String(completed)),
            "uploadLength": "0",
            "downloadSpeed": .string(String(running ? Int64(snapshot.progress.bytesPerSecond) : 0)),
            "uploadSpeed": "0",
            "connections": .string(String(running ? snapshot.progress.activeConnections : 0)),
            "numSeeders": "0",
            "pieceLength": .string(String(pieceLength)),
            "numPieces": .string(String((total + pieceLength - 1) / pieceLength)),
            "dir": .string(directory(of: snapshot, downloadDirectory: downloadDirectory)),
            "files": .array([file(snapshot, total: total, completed: completed)]),
        ]
        switch statusName {
        case "complete":
            fields["errorCode"] = "0"
            fields["errorMessage"] = ""
        case "error":
            fields["errorCode"] = .string(errorCode(snapshot.lastError))
            fields["errorMessage"] = .string(snapshot.lastError?.summary ?? "failed")
        case "removed":
            fields["errorCode"] = "31"
            fields["errorMessage"] = "Removed"
        default:
            break
        }
        guard !keys.isEmpty else { return .object(fields) }
        return .object(fields.filter { keys.contains($0.key) })
    }

    /// The `files` entry of a one-file download (also `getFiles`).
    static func file(_ snapshot: DownloadSnapshot, total: Int64, completed: Int64) -> JSONValue {
        [
            "index": "1",
            "path": .string(snapshot.file?.path ?? ""),
            "length": .string(String(total)),
            "completedLength": .string(String(completed)),
            "selected": "true",
            "uris": .array([uri(snapshot)]),
        ]
    }

    /// The one URI of a download (`getUris`).
    static func uri(_ snapshot: DownloadSnapshot) -> JSONValue {
        ["uri": .string(snapshot.url.absoluteString), "status": "used"]
    }

    static func directory(of snapshot: DownloadSnapshot, downloadDirectory: URL) -> String {
        snapshot.file?.deletingLastPathComponent().path ?? downloadDirectory.path
    }
}
