import Foundation
import HaulKit
import HummingbirdWebSocket
import Logging

/// The WebSocket sessions of the daemon and what they are told: aria2's notifications for every session that made an
/// authenticated call (one that never did learns nothing, not even the GIDs: aria2 tells every session), and Haul's
/// progress feed (`haul.onDownloadProgress`, at most 4 a second per download) for sessions that asked for it with
/// `haul.subscribe`: of every download, or only of those whose GIDs it names (`haul.subscribe([gid, …])`, as the
/// dashboard names the rows it shows; each call replaces the list).
public actor NotificationHub {
    private struct Session {
        let outbound: WebSocketOutboundWriter
        var authenticated = false
        var subscribed = false
        /// The downloads whose progress it wants; nil for all.
        var watching: Set<DownloadID>?
    }

    private var sessions: [UUID: Session] = [:]
    private var lastProgress: [DownloadID: ContinuousClock.Instant] = [:]
    private let logger: Logger
    /// Progress notifications per download are at least this far apart.
    static let progressSpacing = Duration.milliseconds(250)

    public init(logger: Logger) { self.logger = logger }

    func open(_ outbound: WebSocketOutboundWriter) -> UUID {
        let id = UUID()
        sessions[id] = Session(outbound: outbound)
        return id
    }

    func close(_ id: UUID) { sessions[id] = nil }

    func subscribe(_ id: UUID, watching: Set<DownloadID>? = nil) {
        sessions[id]?.subscribed = true
        sessions[id]?.watching = watching
    }

    /// The downloads `haul.subscribe`'s parameters name: nil (all) without a list; GIDs that are not GIDs are left
    /// out; at most 1,000.
    static func watchList(_ params: [JSONValue]) -> Set<DownloadID>? {
        guard let list = params.first?.arrayValue else { return nil }
        return Set(
            list.prefix(1_000).compactMap { value in
                value.stringValue.flatMap { $0.count == 16 ? UInt64($0, radix: 16) : nil }
                    .map { DownloadID(rawValue: Int64(bitPattern: $0)) }
            })
    }

    /// Marks a session as having made an authenticated call: from now on it is told aria2's notifications.
    func authenticate(_ id: UUID) { sessions[id]?.authenticated = true }

    /// Whether the session made an authenticated call.
    func isAuthenticated(_ id: UUID) -> Bool { sessions[id]?.authenticated ?? false }

    /// Sessions open now (for tests and the start-up line).
    public var count: Int { sessions.count }

    /// Follows the manager's events until the stream ends, turning them into notifications.
    public func relay(_ events: AsyncStream<DownloadEvent>) async {
        for await event in events {
            let gid = GID(event.id).description
            switch event.change {
            case .status(let status):
                guard let method = Self.notification(for: status) else { continue }
                await broadcast(method, ["gid": .string(gid)], subscribedOnly: false)
            case .progress(let progress):
                let now = ContinuousClock.now
                if let last = lastProgress[event.id], last.duration(to: now) < Self.progressSpacing { continue }
                lastProgress[event.id] = now
                var fields: [String: JSONValue] = [
                    "gid": .string(gid), "completedLength": .string(String(progress.receivedBytes)),
                    "totalLength": .string(String(progress.expectedBytes ?? 0)),
                    "downloadSpeed": .string(String(Int64(progress.bytesPerSecond))),
                    "connections": .string(String(progress.activeConnections)),
                ]
                if let eta = progress.estimatedTimeRemaining {
                    fields["eta"] = .string(String(Int64(eta.components.seconds)))
                }
                await broadcast("haul.onDownloadProgress", .object(fields), subscribedOnly: true, about: event.id)
            case .added, .restarted, .retrying, .mirrorDropped, .fileChanged, .verified, .waitingForSpace, .connections:
                continue
            }
        }
    }

    /// aria2's notification for a change of state.
    static func notification(for status: DownloadStatus) -> String? {
        switch status {
        case .running: "aria2.onDownloadStart"
        case .paused, .interrupted: "aria2.onDownloadPause"
        case .completed: "aria2.onDownloadComplete"
        case .failed: "aria2.onDownloadError"
        case .removed: "aria2.onDownloadStop"
        case .queued: nil
        }
    }

    /// Sends to every authenticated session, or (`subscribedOnly`) to those subscribed that watch `download`.
    private func broadcast(
        _ method: String, _ event: JSONValue, subscribedOnly: Bool, about download: DownloadID? = nil
    ) async {
        let text: JSONValue = ["jsonrpc": "2.0", "method": .string(method), "params": [event]]
        let message = text.jsonText
        for (id, session) in sessions where session.authenticated && (!subscribedOnly || session.subscribed) {
            if subscribedOnly, let download, let watching = session.watching, !watching.contains(download) {
                continue
            }
            do {
                try await session.outbound.write(.text(message))
            } catch {
                logger.debug("dropping a WebSocket session", metadata: ["error": "\(error)"])
                sessions[id] = nil
            }
        }
    }
}
