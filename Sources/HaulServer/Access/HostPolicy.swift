import Synchronization

/// Which `Host` a request may name. A page on `rebind.attacker.example` whose name the attacker points at 127.0.0.1
/// (DNS rebinding) reaches the daemon as its own origin, but its requests still name the attacker's host: only this
/// machine's loopback names (`127.0.0.1` and the rest of 127/8, `[::1]`, `localhost`) on the daemon's port pass,
/// plus names given with `--allow-host`; when the daemon listens beyond loopback, any IP address on its port too (an
/// address is not a name that DNS can point elsewhere).
public struct HostPolicy: Sendable {
    /// Hosts allowed besides those, as `--allow-host` gave them: a name (any port) or `name:port` (that port only).
    public let allowed: [HostAuthority]
    /// Whether the daemon listens on an address other machines reach.
    public let exposed: Bool
    let port: ListeningPort

    /// `listening`: the address the daemon listens on (`--host`); `port`: its port (0 until it is known);
    /// `allowed`: `--allow-host` values, each already checked with ``HostAuthority/init(parsing:)``.
    public init(listening: String, port: ListeningPort, allowed: [HostAuthority]) {
        self.allowed = allowed
        self.exposed = !HostAuthority.isLoopback(listening)
        self.port = port
    }

    /// Whether a request whose `Host` is `authority` (nil: none) may proceed.
    public func permits(_ authority: String?) -> Bool {
        guard let authority, let named = HostAuthority(parsing: authority) else { return false }
        if allowed.contains(where: { $0.host == named.host && ($0.port == nil || $0.port == named.port) }) {
            return true
        }
        // A browser leaves out port 80 only.
        guard (named.port ?? 80) == port.current else { return false }
        return named.isLoopback || (exposed && named.isAddress)
    }
}

/// The daemon's port: the one configured, or the one the system chose once the server listens (port 0).
public final class ListeningPort: Sendable {
    private let configured: Int
    private let bound = Atomic(0)

    public init(configured: Int) { self.configured = configured }

    /// The port requests reach the daemon on.
    public var current: Int {
        let bound = bound.load(ordering: .acquiring)
        return bound > 0 ? bound : configured
    }

    /// Records the port the server listens on.
    func listening(on port: Int) { bound.store(port, ordering: .releasing) }
}
