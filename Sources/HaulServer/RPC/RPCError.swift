/// A JSON-RPC error object as aria2 sends it: `{"code": …, "message": …}`, with aria2's codes and messages (clients
/// compare the messages, `Unauthorized` above all). Haul's own refusals use codes from JSON-RPC's range for server
/// errors (-32000 to -32099), each stable.
public struct RPCError: Error, Sendable, Hashable {
    public var code: Int
    public var message: String

    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// A method failed (aria2's code 1): a bad GID, a download in the wrong state, a refused option.
    public static func failed(_ message: String) -> RPCError { RPCError(code: 1, message: message) }
    public static let unauthorized = RPCError(code: 1, message: "Unauthorized")
    /// The request is not JSON (or nests deeper than any call needs).
    public static let unparsable = RPCError(code: -32700, message: "Parse error.")
    public static let invalidRequest = RPCError(code: -32600, message: "Invalid Request.")
    public static let methodNotFound = RPCError(code: -32601, message: "Method not found.")
    public static let invalidParams = RPCError(code: -32602, message: "Invalid params.")

    /// A batch or a `system.multicall` holds more calls than allowed.
    public static func tooManyCalls(limit: Int) -> RPCError {
        RPCError(code: -32001, message: "Too many calls in one request: at most \(limit).")
    }
    /// The answer would be larger than allowed (ask for fewer downloads or keys at a time).
    public static func responseTooLarge(limit: Int) -> RPCError {
        RPCError(code: -32002, message: "The answer would exceed \(limit) bytes: ask for less at a time.")
    }
    /// Too many calls with a wrong token lately: refused until the budget refills (the right token still works).
    public static let tooManyFailedAuthentications = RPCError(
        code: -32003, message: "Too many failed authentications: wait and try again.")
    /// The request body is larger than allowed.
    public static func requestTooLarge(limit: Int) -> RPCError {
        RPCError(code: -32004, message: "The request exceeds \(limit) bytes.")
    }
    /// A `GET` asked for JSONP, which is off unless `haul serve --enable-jsonp`.
    public static let jsonpDisabled = RPCError(
        code: -32005, message: "JSONP is disabled: start haul serve with --enable-jsonp to allow it.")

    /// The HTTP status aria2 answers a single request that failed with this error (Haul's own: 4xx as HTTP says).
    public var httpStatus: Int {
        switch code {
        case 1, -32600, -32001: 400
        case -32601: 404
        case -32003: 429
        case -32004: 413
        case -32005: 403
        default: 500
        }
    }

    var json: JSONValue { ["code": .integer(Int64(code)), "message": .string(message)] }
}
