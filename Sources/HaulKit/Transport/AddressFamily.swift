/// Which IP version connections use, when it must be one (curl's and wget's `-4` and `-6`).
public enum AddressFamily: String, Sendable, Hashable, Codable {
    /// IPv4 only: a host with only IPv6 addresses cannot be reached.
    case ipv4
    /// IPv6 only: a host with only IPv4 addresses cannot be reached.
    case ipv6

    /// The wildcard local address of the family: binding to it makes a connection of that family.
    var wildcard: String { self == .ipv4 ? "0.0.0.0" : "::" }
}
