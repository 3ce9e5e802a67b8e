import ArgumentParser
import Foundation
import HaulKit

/// How requests reach the network: shared by every command that downloads (`get`, `run`, `serve`).
struct ProxyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Send every request through this proxy: http://[USER:PASSWORD@]HOST[:PORT] or socks5h://HOST[:PORT] "
                + "(default: $http_proxy, $https_proxy, $all_proxy; hosts in $no_proxy go directly).",
            valueName: "URL"))
    var proxy: String?

    @Flag(name: .customLong("no-proxy"), help: "Connect directly, ignoring --proxy and the proxy environment.")
    var noProxy = false

    @Flag(name: [.customShort("4"), .customLong("inet4-only")], help: "Connect over IPv4 only.")
    var inet4Only = false

    @Flag(name: [.customShort("6"), .customLong("inet6-only")], help: "Connect over IPv6 only.")
    var inet6Only = false

    @Option(
        name: .customLong("connect-timeout"),
        help: ArgumentHelp(
            "Seconds to resolve the host and open a connection (and finish TLS) before the attempt fails.",
            valueName: "SECONDS"))
    var connectTimeout: Double = 30

    /// The IP version chosen by -4 or -6.
    var addressFamily: AddressFamily? { inet4Only ? .ipv4 : inet6Only ? .ipv6 : nil }

    func validate() throws {
        if noProxy, proxy != nil { throw ValidationError("--proxy and --no-proxy cannot be used together") }
        if inet4Only, inet6Only { throw ValidationError("-4 and -6 cannot be used together") }
        try TransferOptions.checkSeconds(connectTimeout, "--connect-timeout", minimum: 0.1)
        _ = try settings()
    }

    /// Sets the proxies, the IP version and the connect timeout (checked by `validate()`).
    func apply(to configuration: inout DownloadManager.Configuration) throws {
        configuration.proxy = try settings()
        configuration.addressFamily = addressFamily
        configuration.connectTimeout = .milliseconds(Int64(connectTimeout * 1000))
    }

    /// The proxies to use, or nil for none.
    func settings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ProxySettings? {
        if noProxy { return nil }
        do {
            let fromEnvironment = try ProxySettings.fromEnvironment(environment)
            guard let proxy else { return fromEnvironment }
            let text = proxy.contains("://") ? proxy : "http://" + proxy
            guard let url = URL(string: text), url.host != nil else {
                throw ValidationError("--proxy '\(proxy)' is not a URL like http://proxy.example:3128")
            }
            return try ProxySettings(all: url, bypass: fromEnvironment?.bypass ?? [])
        } catch let error as DownloadError {
            throw ValidationError(error.summary)
        }
    }
}
