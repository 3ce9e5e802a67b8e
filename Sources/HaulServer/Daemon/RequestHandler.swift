import Foundation
import HTTPTypes
import HaulKit
import Hummingbird
import NIOCore

/// Answers JSON-RPC over HTTP as aria2 does: `POST /jsonrpc` with a request or a batch; `GET /jsonrpc?method=…&id=…
/// &params=<base64 JSON>`, with an optional `jsoncallback` (JSONP) when the daemon allows it; CORS for the origins
/// allowed. ``GateMiddleware`` has already let the request through (host, origin, fetch metadata).
struct RequestHandler: Sendable {
    let daemon: HaulDaemon

    /// The longest JSONP callback name.
    static let maxCallbackLength = 128

    func post(_ request: Request) async throws -> Response {
        let limit = daemon.configuration.maxRequestBytes
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            return await tooLarge(request)
        }
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: limit)
        } catch {
            return await tooLarge(request)
        }
        let reply = await daemon.dispatcher().reply(to: Data(buffer: body))
        return await respond(reply, callback: nil, request: request)
    }

    func get(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let callback: String? = query.get("jsoncallback").map { String($0) }
        let id: JSONValue = query.get("id").map { .string(String($0).removingPercentEncoding ?? String($0)) } ?? .null
        if let callback {
            guard daemon.configuration.enablesJSONP else {
                let reply = RPCDispatcher.Reply(
                    body: RPCDispatcher.response(id: id, error: .jsonpDisabled),
                    httpStatus: RPCError.jsonpDisabled.httpStatus, unauthorized: false)
                return await respond(reply, callback: nil, request: request)
            }
            guard Self.isCallbackName(callback) else { return Response(status: .badRequest) }
        }
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

    /// A body over the limit: refused with an error before (or instead of) reading the rest.
    private func tooLarge(_ request: Request) async -> Response {
        let error = RPCError.requestTooLarge(limit: daemon.configuration.maxRequestBytes)
        let reply = RPCDispatcher.Reply(
            body: RPCDispatcher.response(id: .null, error: error), httpStatus: error.httpStatus, unauthorized: false)
        return await respond(reply, callback: nil, request: request)
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
        // An answer is never run as a script of another type, nor kept by a cache.
        headers[.xContentTypeOptions] = "nosniff"
        headers[.cacheControl] = "no-store"
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
        !name.isEmpty && name.utf8.count <= maxCallbackLength
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

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
}
