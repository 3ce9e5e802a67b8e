import Hummingbird
import NIOCore

/// Runs the daemon's ``RequestGate`` before every route: a refused request gets the refusal's status and reason as
/// plain text, and nothing else runs.
struct GateMiddleware<Context: RequestContext>: RouterMiddleware {
    let gate: RequestGate

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let refusal = gate.refusal(request.head, isRPC: request.uri.path == "/jsonrpc") {
            return Response(
                status: refusal.status, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: refusal.reason)))
        }
        return try await next(request, context)
    }
}
