import Foundation

/// Answers JSON-RPC 2.0 requests as aria2 does: single and batch requests, the `token:SECRET` first parameter,
/// `system.multicall`, and aria2's error codes and HTTP statuses; within limits aria2 does not have.
///
/// A request (a batch and a multicall included) may try one token: once a token failed, the calls after it that need
/// one are refused without comparing theirs, and every failure draws on the daemon's ``FailureLimiter``. A batch or a
/// multicall holds at most ``Limits/calls`` calls, and an answer larger than ``Limits/responseBytes`` is replaced by
/// an error, found as it grows (a batch stops at the call that crosses the limit).
public struct RPCDispatcher: Sendable {
    /// Calls one method with its parameters (the token already removed).
    public typealias Call = @Sendable (_ method: String, _ params: [JSONValue]) async throws(RPCError) -> JSONValue

    /// What a request (single or batch) produced.
    public struct Reply: Sendable {
        /// The response object, or the array of them for a batch.
        public var body: JSONValue
        /// aria2's HTTP status for it: 200, or the error's status for a single request that failed.
        public var httpStatus: Int
        /// Whether any call in it failed authentication (the answer is then delayed, as aria2 does).
        public var unauthorized: Bool
        /// Whether any call in it carried the right token.
        public var authenticated = false
    }

    /// How much one request may ask for.
    public struct Limits: Sendable {
        /// Calls in one batch, and in one `system.multicall` (aria2's clients send tens).
        public var calls = 1_000
        /// Bytes of one answer's JSON text.
        public var responseBytes = 32 << 20

        public init() {}
    }

    /// What one request showed of its caller so far.
    struct Caller {
        /// A token it carried was wrong: later calls are refused without comparing theirs.
        var failed = false
        /// A token it carried was right.
        var authenticated = false
    }

    /// Methods that need no token: they reveal nothing (aria2 does the same).
    static let tokenFree: Set<String> = ["system.listMethods", "system.listNotifications", "system.multicall"]

    let secret: String
    let limits: Limits
    let failures: FailureLimiter
    let call: Call

    public init(
        secret: String, limits: Limits = Limits(), failures: FailureLimiter = FailureLimiter(), call: @escaping Call
    ) {
        self.secret = secret
        self.limits = limits
        self.failures = failures
        self.call = call
    }

    /// Answers the JSON text of a request or a batch.
    public func reply(to data: Data) async -> Reply {
        guard let request = JSONValue(parsing: data) else {
            return Reply(body: Self.response(id: .null, error: .unparsable), httpStatus: 500, unauthorized: false)
        }
        return await reply(to: request)
    }

    /// Answers a parsed request or batch.
    public func reply(to request: JSONValue) async -> Reply {
        var caller = Caller()
        guard case .array(let batch) = request else {
            var (response, error) = await answer(request, &caller)
            if JSONWriter.byteCount(response, upTo: limits.responseBytes) == nil {
                error = .responseTooLarge(limit: limits.responseBytes)
                response = Self.response(
                    id: Self.id(of: request) ?? .null, error: .responseTooLarge(limit: limits.responseBytes))
            }
            return Reply(
                body: response, httpStatus: error?.httpStatus ?? 200, unauthorized: caller.failed,
                authenticated: caller.authenticated)
        }
        guard !batch.isEmpty else {
            return Reply(body: Self.response(id: .null, error: .invalidRequest), httpStatus: 400, unauthorized: false)
        }
        guard batch.count <= limits.calls else {
            let error = RPCError.tooManyCalls(limit: limits.calls)
            return Reply(
                body: Self.response(id: .null, error: error), httpStatus: error.httpStatus, unauthorized: false)
        }
        var responses: [JSONValue] = []
        var size = 1
        for entry in batch {
            let (response, _) = await answer(entry, &caller)
            guard let length = JSONWriter.byteCount(response, upTo: limits.responseBytes - size) else {
                let error = RPCError.responseTooLarge(limit: limits.responseBytes)
                return Reply(
                    body: Self.response(id: .null, error: error), httpStatus: error.httpStatus,
                    unauthorized: caller.failed, authenticated: caller.authenticated)
            }
            size += length + 1
            responses.append(response)
        }
        return Reply(
            body: .array(responses), httpStatus: 200, unauthorized: caller.failed, authenticated: caller.authenticated)
    }

    /// One request object: its response, and the error if it failed.
    private func answer(_ request: JSONValue, _ caller: inout Caller) async -> (JSONValue, RPCError?) {
        guard case .object(let fields) = request, let id = Self.id(of: request) else {
            return (Self.response(id: .null, error: .invalidRequest), .invalidRequest)
        }
        guard let method = fields["method"]?.stringValue else {
            return (Self.response(id: id, error: .invalidRequest), .invalidRequest)
        }
        let params: [JSONValue]
        switch fields["params"] {
        case nil, .null?: params = []
        case .array(let list)?: params = list
        default: return (Self.response(id: id, error: .invalidParams), .invalidParams)
        }
        do {
            return (Self.response(id: id, result: try await invoke(method, params, &caller)), nil)
        } catch {
            return (Self.response(id: id, error: error), error)
        }
    }

    /// A request's `id`: a string, a number or null (JSON-RPC's rule; the answer echoes it, so nothing larger); nil
    /// when it is anything else.
    static func id(of request: JSONValue) -> JSONValue? {
        switch request["id"] {
        case nil: .null
        case .array?, .object?: nil
        case let id?: id
        }
    }

    /// Checks the token (unless the method needs none) and calls the method.
    func invoke(_ method: String, _ params: [JSONValue], _ caller: inout Caller) async throws(RPCError) -> JSONValue {
        if method == "system.multicall" { return try await multicall(params, &caller) }
        var params = params
        var token: String?
        if let first = params.first?.stringValue, first.hasPrefix("token:") {
            token = String(first.dropFirst("token:".count))
            params.removeFirst()
        }
        if !Self.tokenFree.contains(method) {
            // One guess per request: after a wrong token, the others are not compared.
            guard !caller.failed else { throw .unauthorized }
            guard Self.constantTimeEqual(token ?? "", secret) else {
                caller.failed = true
                throw failures.admit() ? .unauthorized : .tooManyFailedAuthentications
            }
            caller.authenticated = true
        }
        return try await call(method, params)
    }

    /// `system.multicall([{methodName, params}, …])`: each result as a one-element array, each failure as its error
    /// object. Every call carries its own token.
    private func multicall(_ params: [JSONValue], _ caller: inout Caller) async throws(RPCError) -> JSONValue {
        guard let calls = params.first?.arrayValue else { throw .failed("system.multicall expects an array of calls") }
        guard calls.count <= limits.calls else { throw .tooManyCalls(limit: limits.calls) }
        var results: [JSONValue] = []
        var size = 1
        for entry in calls {
            let result: JSONValue
            if let method = entry["methodName"]?.stringValue {
                if method == "system.multicall" {
                    result = RPCError.failed("Recursive system.multicall forbidden.").json
                } else {
                    do {
                        result = .array([try await invoke(method, entry["params"]?.arrayValue ?? [], &caller)])
                    } catch {
                        result = error.json
                    }
                }
            } else {
                result = RPCError.failed("Missing methodName.").json
            }
            guard let length = JSONWriter.byteCount(result, upTo: limits.responseBytes - size) else {
                throw .responseTooLarge(limit: limits.responseBytes)
            }
            size += length + 1
            results.append(result)
        }
        return .array(results)
    }

    static func response(id: JSONValue, result: JSONValue) -> JSONValue {
        ["id": id, "jsonrpc": "2.0", "result": result]
    }

    static func response(id: JSONValue, error: RPCError) -> JSONValue {
        ["id": id, "jsonrpc": "2.0", "error": error.json]
    }

    /// Compares secrets in time that does not depend on where they differ.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
