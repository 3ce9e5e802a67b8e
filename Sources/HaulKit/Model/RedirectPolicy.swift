/// What a download's requests keep when a server redirects them.
///
/// By default credentials (``DownloadOptions/credentials``, `Authorization` and `Cookie`) and custom headers go only
/// to the origin of the URL that was added, and an `https` download never continues over plain `http`.
/// `User-Agent` and `Referer` are sent everywhere.
public struct RedirectPolicy: Sendable, Hashable, Codable {
    /// Send credentials and custom headers to other origins too (curl's `--location-trusted`). Default false.
    public var trustsOtherOrigins: Bool
    /// Follow a redirect from `https` to `http` (the rest travels unencrypted). Default false: the download fails
    /// with ``DownloadError/Code/insecureRedirect``.
    public var allowsInsecureRedirects: Bool

    public init(trustsOtherOrigins: Bool = false, allowsInsecureRedirects: Bool = false) {
        self.trustsOtherOrigins = trustsOtherOrigins
        self.allowsInsecureRedirects = allowsInsecureRedirects
    }
}
