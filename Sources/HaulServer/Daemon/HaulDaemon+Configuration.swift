import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension HaulDaemon {
    /// How the daemon listens and whom it lets in.
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        /// 0 picks a free port (tests).
        public var port = 6800
        /// Every RPC call must carry `token:<secret>`.
        public var secret: String
        /// Web pages on these origins may call the daemon (CORS) and open its WebSocket.
        public var allowedOrigins: [String] = []
        /// Host names (or `name:port`) requests may name besides this machine's loopback names (`--allow-host`): the
        /// names a reverse proxy or the LAN reach the daemon by.
        public var allowedHosts: [String] = []
        /// Whether `GET /jsonrpc` answers JSONP (`jsoncallback`); off unless `--enable-jsonp`: a script tag on any
        /// page can read a JSONP answer.
        public var enablesJSONP = false
        /// How long a request that failed authentication waits before its answer (aria2 waits too).
        public var unauthorizedDelay: Duration = .seconds(1)
        /// Failed authentications answered `Unauthorized` at once, across every connection; beyond them, wrong
        /// tokens are refused (HTTP 429) until the budget refills.
        public var failedAuthenticationBurst = 10
        /// One more failed authentication is allowed every this long.
        public var failedAuthenticationInterval: Duration = .seconds(1)
        /// The largest request body, and WebSocket frame and message, accepted: room for the largest legitimate
        /// call (a long list of URIs, a Metalink).
        public var maxRequestBytes = 2 << 20
        /// Calls in one batch or `system.multicall`, and bytes in one answer.
        public var rpcLimits = RPCDispatcher.Limits()
        /// Limits on connections, request heads and time.
        public var connectionLimits = ConnectionLimits()
        /// A WebSocket session that made no authenticated call for this long after opening is closed.
        public var webSocketAuthenticationTimeout: Duration = .seconds(30)

        public init(secret: String) { self.secret = secret }

        /// Whether `host` is reachable only from this machine: a loopback address (127.0.0.0/8, `::1`) or the name
        /// `localhost`. Any other name is not, whatever it starts with.
        public static func isLoopback(_ host: String) -> Bool {
            HostAuthority.isLoopback(host)
        }
    }

    /// Limits that hold whatever a connection sends: how many at once, how large and how slow a request head may be,
    /// how long a connection may stay idle.
    public struct ConnectionLimits: Sendable {
        /// Connections open at once (WebSockets included); beyond them a connection is answered 503 and closed. Kept
        /// below half the process's file limit whatever is set here (see ``effectiveConnections(fileLimit:)``).
        public var connections = 256
        /// Bytes of a request line (method, target, version): beyond, 414.
        public var requestLineBytes = 16 << 10
        /// Bytes of a whole request head (request line and header fields): beyond, 431.
        public var headBytes = 32 << 10
        /// Time from a connection's opening to the end of its first request head: beyond, it is closed.
        public var headerTimeout: Duration = .seconds(10)
        /// Time a connection may stay idle between requests (or within a request body) before it is closed.
        public var idleTimeout: Duration = .seconds(60)

        public init() {}

        /// ``connections``, lowered so that connections never take more than half of `fileLimit` descriptors (the
        /// rest is for downloads, the database and the journal files); at least 8.
        public func effectiveConnections(fileLimit: Int) -> Int {
            max(8, min(connections, (fileLimit - 64) / 2))
        }

        /// The process's limit on open files (its soft limit).
        static var processFileLimit: Int {
            var limit = rlimit()
            #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
            #else
            let resource = RLIMIT_NOFILE
            #endif
            guard getrlimit(resource, &limit) == 0 else { return 1024 }
            // No limit (RLIM_INFINITY, the largest value) clamps to the largest Int.
            return Int(clamping: limit.rlim_cur)
        }
    }
}
