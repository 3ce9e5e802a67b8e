import Foundation
import HTTPTypes
import HaulKit
import Hummingbird
import NIOCore

/// `GET /metrics`, `GET /healthz` and `GET /readyz`, behind the same ``GateMiddleware`` as every route (`Host`,
/// origins).
///
/// - `/healthz`: the daemon answers (no authentication): `200 ok`.
/// - `/readyz`: the store is reachable and takes writes (``DownloadManager/checkStore()``): `200 ready`, else `503`
///   with the reason (no authentication; a shared database's address is masked).
/// - `/metrics`: Prometheus's text format, for `Authorization: Bearer` with the RPC secret or the metrics token;
///   `401` otherwise, after the same delay and from the same failure budget as a wrong RPC token.
struct HealthEndpoints: Sendable {
    let daemon: HaulDaemon

    func alive() -> Response {
        Self.text("ok\n", status: .ok)
    }

    func ready() async -> Response {
        do {
            try await daemon.manager.checkStore()
            return Self.text("ready\n", status: .ok)
        } catch {
            return Self.text("not ready: \(error.summary)\n", status: .serviceUnavailable)
        }
    }

    func metrics(_ request: Request) async -> Response {
        guard let token = Self.bearer(request.headers[.authorization]),
            RPCDispatcher.constantTimeEqual(token, daemon.configuration.secret)
                || daemon.monitoring.metricsToken.map({ RPCDispatcher.constantTimeEqual(token, $0) }) == true
        else {
            let admitted = daemon.failures.admit()
            try? await Task.sleep(for: daemon.configuration.unauthorizedDelay)
            var response = Self.text(
                admitted
                    ? "send Authorization: Bearer with the RPC secret or the --metrics-token\n"
                    : "too many failed authentications: try again later\n",
                status: admitted ? .unauthorized : .tooManyRequests)
            response.headers[.wwwAuthenticate] = "Bearer realm=\"haul\""
            return response
        }
        let text = await daemon.metrics.exposition(
            manager: daemon.manager, rpcConnections: daemon.connections.count)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The token of `Authorization: Bearer TOKEN`.
    static func bearer(_ field: String?) -> String? {
        guard let field, field.count > 7, field.prefix(7).lowercased() == "bearer " else { return nil }
        return String(field.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    static func text(_ text: String, status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
