import Foundation
import HaulKit

/// The JSON body of a webhook: the event, and the download as the state change recorded it (keys without a value
/// are left out: `error` is there only for an `error` event).
///
/// ```json
/// {"id": "5f0c…", "event": "complete", "time": "2026-11-27T17:30:12.345Z",
///  "download": {"id": 3, "gid": "0000000000000003", "url": "https://…", "file": "/srv/a.iso",
///               "size": 1048576, "sha256": "9f86…"}}
/// ```
package struct EventPayload: Codable, Equatable, Sendable {
    /// The event's id: the same in every delivery of it (a receiver drops the duplicates by it).
    package var id: String
    /// `start`, `pause`, `stop`, `complete` or `error`.
    package var event: String
    /// When the state changed (ISO 8601, UTC, milliseconds).
    package var time: String
    package var download: Download

    package struct Download: Codable, Equatable, Sendable {
        package var id: Int64
        /// aria2's GID of the download (its id in 16 hex digits), as `haul serve` names it.
        package var gid: String
        package var url: String
        package var file: String?
        package var size: Int64?
        package var sha256: String?
        package var error: Failure?
    }

    package struct Failure: Codable, Equatable, Sendable {
        /// The stable code (docs/errors.md).
        package var code: Int
        package var message: String
    }

    package init(_ event: OutboxEvent) {
        id = event.eventID
        self.event = event.kind.rawValue
        time = Self.time(event.createdAt)
        download = Download(
            id: event.downloadID.rawValue, gid: Self.gid(event.downloadID), url: event.url, file: event.file,
            size: event.size, sha256: event.sha256,
            error: event.errorCode.map { Failure(code: $0, message: event.error ?? "") })
    }

    /// aria2's GID of `id`: 16 hex digits (as HaulServer's `GID`).
    package static func gid(_ id: DownloadID) -> String {
        let digits = String(UInt64(bitPattern: id.rawValue), radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    static func time(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// The body as sent: compact JSON with sorted keys.
    package func body() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
