import Synchronization

/// The connections a daemon has open, against its limit. Shared by every connection's ``ConnectionGuard``.
final class ConnectionCounter: Sendable {
    let limit: Int
    private let open = Mutex(0)

    init(limit: Int) { self.limit = limit }

    /// Counts a new connection if there is room; false when the limit is reached (the connection is then refused).
    func admit() -> Bool {
        open.withLock { open in
            guard open < limit else { return false }
            open += 1
            return true
        }
    }

    /// Counts a connection admitted before as closed.
    func release() { open.withLock { $0 -= 1 } }

    /// Connections open now.
    var count: Int { open.withLock { $0 } }
}
