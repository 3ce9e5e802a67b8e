import Foundation
import HaulKit
import Hummingbird
import NIOCore

/// Answers JSON-RPC over HTTP as aria2 does: `POST /jsonrpc` with a request or a batch; `GET /jsonrpc?method=…&id=…
/// &params=<base64 JSON>` with an optional `jsoncallback` (JSONP); CORS for the origins allowed.
struct RequestHandler: Sendable {
    let daemon: HaulDaemon

    func post(_ request: Request) async throws -> Response {
        if let refusal = refusal(request) { return refusal }
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: daemon.configuration.maxRequestBytes)
        } catch {
            return Response(status: .contentTooLarge)
        }
        let reply = await daemon.dispatcher().reply(to: Data(buffer: body))
        return await respond(reply, callback: nil, request: request)
    }

    func get(_ request: Request) async throws -> Response {
        if let refusal = refusal(request) { return refusal }
        let query = request.uri.queryParameters
        let callback: String? = query.get("jsoncallback").map { String($0) }
        if let callback, !Self.isCallbackName(callback) {
            return Response(status: .badRequest)
        }
        let id: JSONValue = query.get("id").map { .string(String($0).removingPercentEncoding ?? String($0)) } ?? .null
        var params: JSONValue?
        if let encoded = query.get("params") {
            let text = (String(encoded).removingPercentEncoding ?? String(encoded))
            guard let data = Self.base64(text), let value = JSONValue(parsing: data) else {
                let reply = RPCDispatcher.Reply(
                    body: RPCDispatcher.response(id: id, error: .unparsable), httpStatus: 500, unauthorized: false)
                return await respond(reply, callback: callback, request: request)
            }
            params = value
        }
        let reply: RPCDispatcher.Reply
        if let method = query.get("method").map({ String($0).removingPercentEncoding ?? String($0) }) {
            var call: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method), "id": id]
            if let params { call["params"] = params }
            reply = await daemon.dispatcher().reply(to: .object(call))
        } else if let params {
            // No method: the params are a whole batch.
            reply = await daemon.dispatcher().reply(to: params)
        } else {
            reply = RPCDispatcher.Reply(
                body: RPCDispatcher.response(id: id, error: .invalidRequest), httpStatus: 400, unauthorized: false)
        }
        return await respond(reply, callback: callback, request: request)
    }

    /// CORS preflight: allowed for the origins named with `--allow-origin`, refused for others.
    func preflight(_ request: Request) -> Response {
        guard let origin = request.headers[.origin], daemon.policy.isListed(origin) else {
            return Response(status: .forbidden)
        }
        var headers = corsHeaders(origin)
        headers[.accessControlAllowMethods] = "POST, GET, OPTIONS"
        headers[.accessControlAllowHeaders] = "Content-Type"
        headers[.accessControlMaxAge] = "1728000"
        return Response(status: .noContent, headers: headers)
    }

    /// A page from a foreign origin that was not allowed is refused before anything runs.
    private func refusal(_ request: Request) -> Response? {
        guard daemon.policy.permits(origin: request.headers[.origin], host: request.head.authority) else {
            return Response(status: .forbidden)
        }
        return nil
    }

    private func respond(_ reply: RPCDispatcher.Reply, callback: String?, request: Request) async -> Response {
        if reply.unauthorized {
            // Guessing the secret costs a second a try.
            try? await Task.sleep(for: daemon.configuration.unauthorizedDelay)
        }
        var text = reply.body.jsonText
        var headers = HTTPFields()
        if let callback {
            text = "\(callback)(\(text))"
            headers[.contentType] = "text/javascript"
        } else {
            headers[.contentType] = "application/json-rpc"
        }
        if let origin = request.headers[.origin], daemon.policy.isListed(origin) {
            for field in corsHeaders(origin) { headers.append(field) }
        }
        return Response(
            status: .init(code: reply.httpStatus), headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private func corsHeaders(_ origin: String) -> HTTPFields {
        var headers = HTTPFields()
        headers[.accessControlAllowOrigin] = origin
        headers[.vary] = "Origin"
        return headers
    }

    /// A JSONP callback name: letters, digits, `_`, `.` and `$` only, so the answer cannot carry script of the caller's.
    static func isCallbackName(_ name: String) -> Bool {
        !name.isEmpty
            && name.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "_.$".unicodeScalars.contains(scalar))
            }
    }

    /// Base64 as aria2's clients send it: standard or URL-safe, padded or not.
    static func base64(_ text: String) -> Data? {
        var normalized = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            .replacingOccurrences(of: " ", with: "+")
        while normalized.count % 4 != 0 { normalized += "=" }
        return Data(base64Encoded: normalized)
    }
}
