import Foundation
import HaulKit
import HummingbirdWebSocket

/// One WebSocket client: its requests answered in order on the same socket, aria2's notifications pushed to it once
/// it made an authenticated call, and Haul's progress feed once it calls `haul.subscribe`. A session that makes no
/// authenticated call within ``HaulDaemon/Configuration/webSocketAuthenticationTimeout`` is closed.
struct WebSocketSession: Sendable {
    let daemon: HaulDaemon

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let hub = daemon.hub
        let session = await hub.open(outbound)
        defer { Task { await hub.close(session) } }
        let timeout = daemon.configuration.webSocketAuthenticationTimeout
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            if await !hub.isAuthenticated(session) {
                try await outbound.close(.policyViolation, reason: "no authenticated call")
            }
        }
        defer { watchdog.cancel() }
        let dispatcher = daemon.dispatcher(subscribe: { params in
            await hub.subscribe(session, watching: NotificationHub.watchList(params))
        })
        for try await message in inbound.messages(maxSize: daemon.configuration.maxRequestBytes) {
            let data: Data
            switch message {
            case .text(let text): data = Data(text.utf8)
            case .binary(let buffer): data = Data(buffer: buffer)
            }
            let reply = await dispatcher.reply(to: data)
            if reply.authenticated { await hub.authenticate(session) }
            if reply.unauthorized { try? await Task.sleep(for: daemon.configuration.unauthorizedDelay) }
            try await outbound.write(.text(reply.body.jsonText))
        }
    }
}
