/// A JSON-RPC error object as aria2 sends it: `{"code": …, "message": …}`, with aria2's codes and messages (clients
/// compare the messages, `Unauthorized` above all).
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
    /// The request is not JSON.
    public static let unparsable = RPCError(code: -32700, message: "Parse error.")
    public static let invalidRequest = RPCError(code: -32600, message: "Invalid Request.")
    public static let methodNotFound = RPCError(code: -32601, message: "Method not found.")
    public static let invalidParams = RPCError(code: -32602, message: "Invalid params.")

    /// The HTTP status aria2 answers a single request that failed with this error.
    public var httpStatus: Int {
        switch code {
        case 1, -32600: 400
        case -32601: 404
        default: 500
        }
    }

    var json: JSONValue { ["code": .integer(Int64(code)), "message": .string(message)] }
}
