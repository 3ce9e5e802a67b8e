import Foundation
import HTTPTypes

/// Decides, before anything runs, whether a request may reach the daemon, from its head alone: the `Host` it names
/// (``HostPolicy``: DNS rebinding), the page it comes from (``OriginPolicy``), and for the RPC without an `Origin`,
/// the browser's fetch metadata: a `<script src>` or `<img>` from another site sends no `Origin` but does send
/// `Sec-Fetch-Site`. The same decision guards HTTP requests and the WebSocket upgrade.
public struct RequestGate: Sendable {
    /// Why a request was refused.
    public enum Refusal: Sendable, Hashable {
        /// No `Host`, several, or one the daemon does not answer to.
        case host
        /// A page from an origin that is not allowed.
        case origin
        /// A request from another site's page without an `Origin` (a script or image tag, a navigation).
        case crossSite

        /// The HTTP status of the refusal.
        public var status: HTTPResponse.Status {
            switch self {
            case .host: .misdirectedRequest
            case .origin, .crossSite: .forbidden
            }
        }

        /// What the refusal says, as plain text.
        public var reason: String {
            switch self {
            case .host:
                "haul serve does not answer to this Host: use 127.0.0.1, [::1] or localhost with its port, or start "
                    + "it with --allow-host\n"
            case .origin: "this origin may not call haul serve: start it with --allow-origin to allow it\n"
            case .crossSite: "a page of another site may not call haul serve\n"
            }
        }
    }

    public let hosts: HostPolicy
    public let origins: OriginPolicy

    public init(hosts: HostPolicy, origins: OriginPolicy) {
        self.hosts = hosts
        self.origins = origins
    }

    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    /// `Host` as an ordinary field: where a second `Host` header ends up (HTTPTypes keeps the first as the authority).
    static let host = HTTPField.Name("Host")!

    /// Why the request `head` is refused; nil to let it through. `isRPC`: it is for `/jsonrpc` (HTTP or WebSocket),
    /// where fetch metadata counts too (the dashboard's static files may be linked to from anywhere).
    public func refusal(_ head: HTTPRequest, isRPC: Bool) -> Refusal? {
        // A second Host header stays among the fields (the first is the authority): a browser never sends two.
        guard hosts.permits(head.authority), head.headerFields[values: Self.host].isEmpty else { return .host }
        let origin = head.headerFields[.origin]
        guard origins.permits(origin: origin, host: head.authority) else { return .origin }
        guard isRPC, origin == nil else { return nil }
        switch head.headerFields[Self.secFetchSite]?.lowercased() {
        case nil, "same-origin", "none":
            return nil
        case "same-site":
            // Another origin of the same site (another port of localhost): only one named with --allow-origin, as
            // its Referer shows.
            return refererIsListed(head) ? nil : .crossSite
        default:
            return .crossSite
        }
    }

    /// Whether the `Referer` names a page of an origin given with `--allow-origin`.
    private func refererIsListed(_ head: HTTPRequest) -> Bool {
        guard let referer = head.headerFields[.referer], let url = URL(string: referer), let scheme = url.scheme,
            let host = url.host
        else { return false }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        let origin = "\(scheme)://\(bracketed)" + (url.port.map { ":\($0)" } ?? "")
        return origins.allowed.contains(OriginPolicy.normalized(origin))
    }
}
