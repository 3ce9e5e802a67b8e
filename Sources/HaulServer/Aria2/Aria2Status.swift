import Foundation
import HaulKit

/// One download as aria2 describes it (`tellStatus` and friends): every value a string, the keys aria2 clients read.
struct Aria2Status {
    /// aria2's piece size for HTTP downloads; Haul has no pieces, so progress is reported per megabyte.
    static let pieceLength: Int64 = 1 << 20

    /// aria2's name for a state: active, waiting, paused, complete, error; `removed` is kept by the service. An
    /// interrupted download (its `haul get` ended first) is paused for aria2: it waits for `unpause`.
    static func name(of state: DownloadState) -> String {
        switch state {
        case .running: "active"
        case .queued: "waiting"
        case .paused, .interrupted: "paused"
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
            case .hostDown where error?.httpStatus != nil: 22
            case .networkFailure, .hostDown, .responseTruncated, .tlsFailure: 6
            case .resourceChanged, .serverIgnoredRange, .rangeMismatch, .resourceUnstable: 8
            case .diskFull: 9
            case .destinationInUse: 11
            case .destinationNotWritable: 16
            case .fileSystem: 17
            case .serverError, .httpClientError, .malformedResponse: 22
            case .tooManyRedirects, .redirectLoop: 23
            case .invalidURL, .invalidRequest: 28
            case .rateLimited: 29
            case .checksumMismatch, .serverDigestMismatch: 32
            case .interrupted: 7
            case .fileChanged: 13
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
        // Only the keys asked for are built (clients that poll every second name a few); file URLs are slow to
        // take apart, so the path is read once and cut as text.
        func wanted(_ key: String) -> Bool { keys.isEmpty || keys.contains(key) }
        let path = wanted("dir") || wanted("files") ? snapshot.file?.path : nil
        var fields: [String: JSONValue] = [:]
        func put(_ key: String, _ value: @autoclosure () -> JSONValue) {
            if wanted(key) { fields[key] = value() }
        }
        put("gid", .string(gid.description))
        put("status", .string(statusName))
        put("totalLength", .string(String(total)))
        put("completedLength", .string(String(completed)))
        put("uploadLength", "0")
        put("downloadSpeed", .string(String(running ? Int64(snapshot.progress.bytesPerSecond) : 0)))
        put("uploadSpeed", "0")
        put("connections", .string(String(running ? snapshot.progress.activeConnections : 0)))
        put("numSeeders", "0")
        put("pieceLength", .string(String(pieceLength)))
        put("numPieces", .string(String((total + pieceLength - 1) / pieceLength)))
        put("dir", .string(path.map(Self.parent) ?? downloadDirectory.path))
        put("files", .array([file(snapshot, path: path, total: total, completed: completed)]))
        switch statusName {
        case "complete":
            put("errorCode", "0")
            put("errorMessage", "")
            // Beyond aria2: the file on disk is not the one Haul completed (its size, time or identity differ).
            if let change = snapshot.fileChange { put("fileChange", .string(change)) }
            // Haul's own key (aria2 clients ignore it): what the file was verified against. aria2's
            // `verifiedLength` and `verifyIntegrityPending` mean a hash check under way, which a complete file is not.
            if let verification = snapshot.verification { put("verification", .string(verification.description)) }
        case "error":
            put("errorCode", .string(errorCode(snapshot.lastError)))
            put("errorMessage", .string(snapshot.lastError?.summary ?? "failed"))
        case "removed":
            put("errorCode", "31")
            put("errorMessage", "Removed")
        default:
            // Haul's own keys (aria2 fails a download whose disk is full): an active download that waits for room
            // on its file system, and why ("waiting for space: …").
            if snapshot.isWaitingForSpace {
                put("waitingFor", "space")
                put("waitingReason", .string(snapshot.lastError?.summary ?? "waiting for space"))
            }
        }
        return .object(fields)
    }

    /// The `files` entry of a one-file download (also `getFiles`).
    static func file(_ snapshot: DownloadSnapshot, path: String? = nil, total: Int64, completed: Int64) -> JSONValue {
        [
            "index": "1",
            "path": .string(path ?? snapshot.file?.path ?? ""),
            "length": .string(String(total)),
            "completedLength": .string(String(completed)),
            "selected": "true",
            "uris": .array(uris(snapshot)),
        ]
    }

    /// The URIs of a download (`getUris`): its own, then its mirrors.
    static func uris(_ snapshot: DownloadSnapshot) -> [JSONValue] {
        [["uri": .string(snapshot.url.absoluteString), "status": "used"]]
            + snapshot.options.mirrors.map { ["uri": .string($0.absoluteString), "status": "waiting"] }
    }

    static func directory(of snapshot: DownloadSnapshot, downloadDirectory: URL) -> String {
        snapshot.file.map { parent($0.path) } ?? downloadDirectory.path
    }

    /// The directory part of a file path.
    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
