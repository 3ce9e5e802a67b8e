import Foundation

/// Answers JSON-RPC 2.0 requests as aria2 does: single and batch requests, the `token:SECRET` first parameter,
/// `system.multicall`, and aria2's error codes and HTTP statuses.
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
    }

    /// Methods that need no token: they reveal nothing (aria2 does the same).
    static let tokenFree: Set<String> = ["system.listMethods", "system.listNotifications", "system.multicall"]

    let secret: String
    let call: Call

    public init(secret: String, call: @escaping Call) {
        self.secret = secret
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
        if case .array(let batch) = request {
            guard !batch.isEmpty else {
                return Reply(
                    body: Self.response(id: .null, error: .invalidRequest), httpStatus: 400, unauthorized: false)
            }
            var responses: [JSONValue] = []
            var unauthorized = false
            for entry in batch {
                let (response, error) = await answer(entry)
                unauthorized = unauthorized || error == .unauthorized
                responses.append(response)
            }
            return Reply(body: .array(responses), httpStatus: 200, unauthorized: unauthorized)
        }
        let (response, error) = await answer(request)
        return Reply(body: response, httpStatus: error?.httpStatus ?? 200, unauthorized: error == .unauthorized)
    }

    /// One request object: its response, and the error if it failed.
    private func answer(_ request: JSONValue) async -> (JSONValue, RPCError?) {
        guard case .object(let fields) = request else {
            return (Self.response(id: .null, error: .invalidRequest), .invalidRequest)
        }
        let id = fields["id"] ?? .null
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
            return (Self.response(id: id, result: try await invoke(method, params)), nil)
        } catch {
            return (Self.response(id: id, error: error), error)
        }
    }

    /// Checks the token (unless the method needs none) and calls the method.
    func invoke(_ method: String, _ params: [JSONValue]) async throws(RPCError) -> JSONValue {
        if method == "system.multicall" { return try await multicall(params) }
        var params = params
        var token: String?
        if let first = params.first?.stringValue, first.hasPrefix("token:") {
            token = String(first.dropFirst("token:".count))
            params.removeFirst()
        }
        if !Self.tokenFree.contains(method), !Self.constantTimeEqual(token ?? "", secret) {
            throw .unauthorized
        }
        return try await call(method, params)
    }

    /// `system.multicall([{methodName, params}, …])`: each result as a one-element array, each failure as its error
    /// object. Every call carries its own token.
    private func multicall(_ params: [JSONValue]) async throws(RPCError) -> JSONValue {
        guard let calls = params.first?.arrayValue else { throw .failed("system.multicall expects an array of calls") }
        var results: [JSONValue] = []
        for entry in calls {
            guard let method = entry["methodName"]?.stringValue else {
                results.append(RPCError.failed("Missing methodName.").json)
                continue
            }
            guard method != "system.multicall" else {
                results.append(RPCError.failed("Recursive system.multicall forbidden.").json)
                continue
            }
            let params = entry["params"]?.arrayValue ?? []
            do {
                results.append(.array([try await invoke(method, params)]))
            } catch {
                results.append(error.json)
            }
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
