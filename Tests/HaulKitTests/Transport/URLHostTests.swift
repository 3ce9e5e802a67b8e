import Foundation
import Testing

@testable import HaulKit

@Suite("URL host")
struct URLHostTests {
    /// Foundation's answer, which ``URLHost`` must give for every text.
    static func foundation(_ url: String) -> String { URL(string: url)?.host?.lowercased() ?? "" }

    @Test(
        "a plain URL's host is read from its bytes, as Foundation reads it",
        arguments: [
            "http://127.0.0.1:18080/w2-4k/00000.bin", "https://Example.COM/Big.iso", "HTTP://MIRROR.example.org",
            "https://example.com:8443", "http://example.com/a?b=c#d", "http://example.com?x", "http://example.com#x",
            "http://a-b.example.com/x/../y", "https://example.com:/empty-port", "http://1234/numeric",
            "http://example.com/%E2%82%AC?q=%20", "https://ex.com/a;b=c/d,e!f$g'h(i)j*k+l", "http://example.com:65536/",
            "http://-x-.com/", "http://a..b/", "http://example.com:443?q", "http://example.com#top",
        ])
    func plain(_ url: String) {
        #expect(URLHost.plain(url) == Self.foundation(url))
        #expect(URLHost.lowercased(in: url) == Self.foundation(url))
    }

    @Test(
        "anything unusual is left to Foundation",
        arguments: [
            "http://user:pass@example.com/", "http://[::1]:8080/x", "http://[fe80::1%25eth0]/", "http://ex%41mple.com/",
            "http://exämple.com/", "http://example.com./", "http://example.com:80a/", "http://example.com:1:2/",
            "http://example.com/a b", "http://example.com/ü", "ftp://example.com/file", "httpx://example.com/",
            "http:/example.com/", "http://", "http:///path", "example.com/path", "", "https://ex_ample.com/",
            "http://example.com\t/", "mailto:someone@example.com", "file:///tmp/x",
            "http://example.com:99999999999999999999/", "http://e.com/\\x", "http://e.com/a\"b", "http://e.com/<a>",
            "http://e.com/{a}", "http://e.com/a|b", "http://e.com/a^b", "http://e.com/a`b",
        ])
    func unusual(_ url: String) {
        #expect(URLHost.plain(url) == nil)
        #expect(URLHost.lowercased(in: url) == Self.foundation(url))
    }
}
