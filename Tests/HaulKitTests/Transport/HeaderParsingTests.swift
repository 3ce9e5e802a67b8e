import Foundation
import Testing

@testable import HaulKit

@Suite("Header parsing")
struct HeaderParsingTests {
    @Test(
        "Content-Range",
        arguments: [
            ("bytes 0-499/1234", ContentRange(first: 0, last: 499, completeLength: 1234)),
            ("bytes 500-1233/1234", ContentRange(first: 500, last: 1233, completeLength: 1234)),
            ("bytes 0-0/*", ContentRange(first: 0, last: 0, completeLength: nil)),
            ("bytes */1234", ContentRange(first: nil, last: nil, completeLength: 1234)),
            ("BYTES 1-2/3", ContentRange(first: 1, last: 2, completeLength: 3)),
            ("  bytes 7-9/10 ", ContentRange(first: 7, last: 9, completeLength: 10)),
            ("bytes 5-4/10", nil),
            ("bytes 0-10/10", nil),
            ("bytes */*", nil),
            ("bytes -1-5/10", nil),
            ("items 0-1/2", nil),
            ("bytes 0-1", nil),
            ("bytes a-b/c", nil),
            ("bytes 0-1/99999999999999999999", nil),
            ("bytes 0-1/123456789012345678", ContentRange(first: 0, last: 1, completeLength: 123_456_789_012_345_678)),
            ("bYtEs\u{00A0}3-4/5", nil),
            ("bytes \u{00A0}3-4/5\u{2028}", ContentRange(first: 3, last: 4, completeLength: 5)),
            ("bytes 3-4/5\u{0301}", nil),
            ("bytes 3-\u{FF14}/5", nil),
            ("bytes\u{0}3-4/5", nil),
            ("bytes ", nil),
            ("", nil),
        ] as [(String, ContentRange?)])
    func contentRange(_ header: String, _ expected: ContentRange?) {
        #expect(ContentRange(parsing: header) == expected)
    }

    @Test(
        "Content-Disposition file names",
        arguments: [
            ("attachment; filename=\"report.pdf\"", "report.pdf"),
            ("attachment; filename=report.pdf", "report.pdf"),
            ("inline; FILENAME=\"a b.txt\"", "a b.txt"),
            ("attachment; filename=\"semi;colon.txt\"; size=3", "semi;colon.txt"),
            ("attachment; filename=\"esc\\\"aped.txt\"", "esc\"aped.txt"),
            ("attachment; filename*=UTF-8''na%C3%AFve%20file.txt", "naïve file.txt"),
            ("attachment; filename=\"fallback.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
            ("attachment; filename*=utf-8'en'%E6%96%87.txt; filename=\"x.txt\"", "文.txt"),
            ("attachment; filename*=iso-8859-1''caf%E9.txt", "café.txt"),
            ("attachment; filename*=UTF-8''bad%ZZ; filename=good.txt", "good.txt"),
            ("attachment; filename=unquoted with spaces.zip", "unquoted with spaces.zip"),
            ("attachment; filename=\"unterminated.bin", "unterminated.bin"),
            ("attachment", nil),
            ("attachment; filename=\"\"", nil),
            ("attachment; name=\"x\"", nil),
        ] as [(String, String?)])
    func contentDisposition(_ header: String, _ expected: String?) {
        #expect(ContentDisposition.fileName(from: header) == expected)
    }

    @Test(
        "file names from the network are sanitised",
        arguments: [
            ("../../etc/passwd", "passwd"),
            ("..\\..\\windows\\system.ini", "system.ini"),
            ("/absolute/path.txt", "path.txt"),
            ("..", nil),
            (".hidden", "hidden"),
            ("a\u{0}b\u{1}c\u{7F}.txt", "abc.txt"),
            ("line\nbreak.txt", "linebreak.txt"),
            ("  spaced.txt  ", "spaced.txt"),
            ("normal.tar.gz", "normal.tar.gz"),
            ("", nil),
            ("/", nil),
        ] as [(String, String?)])
    func sanitise(_ raw: String, _ expected: String?) {
        #expect(FileNamer.sanitise(raw) == expected)
    }

    @Test("a plain name is kept as it is, and only a name that cleaning would keep counts as plain")
    func plainNames() {
        let plain = ["file.bin", "00001.bin", "a", "README", "archive.tar.gz", "x~y!(1)[2]{3}=+,;@#$&'", "a..b."]
        let notPlain = [
            ".hidden", " lead", "trail ", "in side", "a/b", "a\\b", "tab\tname", "bell\u{7}", "del\u{7F}",
            "caf\u{E9}", "", String(repeating: "x", count: FileNamer.maximumLength + 1),
        ]
        for name in plain {
            #expect(FileNamer.isPlain(name), "\(name)")
            #expect(FileNamer.cleaned(name) == name, "\(name)")
            #expect(FileNamer.sanitise(name) == name, "\(name)")
        }
        for name in notPlain {
            #expect(!FileNamer.isPlain(name), "\(name)")
            #expect(FileNamer.sanitise(name) == FileNamer.cleaned(name), "\(name)")
        }
        #expect(FileNamer.isPlain(String(repeating: "x", count: FileNamer.maximumLength)))
    }

    @Test("long names are capped to fit with .part, keeping the extension")
    func longNames() throws {
        let long = String(repeating: "é", count: 300) + ".iso"
        let name = try #require(FileNamer.sanitise(long))
        #expect(name.utf8.count <= 250)
        #expect(name.hasSuffix(".iso"))
        #expect((name + ".part").utf8.count <= 255)
        #expect(String(validating: Array(name.utf8), as: UTF8.self) != nil)
    }

    @Test(
        "names from the URL or the fallback",
        arguments: [
            ("http://h/dir/file%20name.zip?x=1#f", nil, "file name.zip"),
            ("http://h/", nil, "index.html"),
            ("http://h", nil, "index.html"),
            ("http://h/dir/", nil, "dir"),
            ("http://h/x.bin", "attachment; filename=\"y.bin\"", "y.bin"),
            ("http://h/x.bin", "attachment; filename=\"../\"", "x.bin"),
            ("http://h/%2e%2e%2fetc%2fpasswd", nil, "passwd"),
            ("http://h/a/b.tar.gz;v=1?q=/x.bin", nil, "b.tar.gz;v=1"),
            ("http://user:pw@h:8080/files//.profile", nil, "profile"),
            ("http://h/dir/%E2%82%AC.txt", nil, "\u{20AC}.txt"),
            ("http://h/a/dir///", nil, "dir"),
            ("http://h///", nil, "index.html"),
            ("http://h/only", nil, "only"),
            ("http://h/\u{00E9}t\u{00E9}/r\u{00E9}sum\u{00E9}.pdf", nil, "r\u{00E9}sum\u{00E9}.pdf"),
        ] as [(String, String?, String)])
    func names(_ url: String, _ disposition: String?, _ expected: String) {
        #expect(FileNamer.name(contentDisposition: disposition, url: URL(string: url)!) == expected)
    }

    @Test(
        "alternatives for taken names",
        arguments: [
            ("file.txt", 1, "file (1).txt"), ("archive.tar.gz", 2, "archive (2).tar.gz"), ("README", 1, "README (1)"),
        ] as [(String, Int, String)])
    func alternatives(_ name: String, _ number: Int, _ expected: String) {
        #expect(FileNamer.alternative(name, number: number) == expected)
    }

    @Test("alternatives of names at the length limit: every number another name, within the limit, ` (n)` kept")
    func alternativesOfLongNames() throws {
        for base in [
            String(repeating: "a", count: 300) + ".bin", String(repeating: "\u{E9}", count: 200) + ".bin",
            String(repeating: "b", count: 251) + ".tar.gz", String(repeating: "c", count: 300),
            "d." + String(repeating: "e", count: 60),
        ] {
            let name = try #require(FileNamer.sanitise(base))
            var seen: Set<String> = [name]
            for number in [1, 2, 9, 10, 11, 100, 12_345] {
                let alternative = FileNamer.alternative(name, number: number)
                #expect(alternative.utf8.count <= FileNamer.maximumLength, "\(alternative)")
                #expect(alternative.contains(" (\(number))"), "\(alternative)")
                #expect(seen.insert(alternative).inserted, "\(number) gives a name of its own: \(alternative)")
                #expect(String(validating: Array(alternative.utf8), as: UTF8.self) != nil)
                let (_, suffix) = FileNamer.split(name)
                if suffix.utf8.count <= 32 { #expect(alternative.hasSuffix(suffix), "\(alternative)") }
            }
        }
        let short = "d." + String(repeating: "e", count: 60)
        #expect(FileNamer.alternative(short, number: 1) == "d (1)." + String(repeating: "e", count: 60))
    }

    @Test(
        "Retry-After",
        arguments: [
            ("120", Duration.seconds(120)), ("0", .zero), ("Sun, 06 Nov 1994 08:49:37 GMT", .zero), ("soon", nil),
            ("-5", nil),
        ] as [(String, Duration?)])
    func retryAfter(_ header: String, _ expected: Duration?) {
        #expect(RetryAfter.delay(from: header, now: Date()) == expected)
    }

    @Test("Retry-After dates in all three HTTP forms")
    func retryAfterDates() throws {
        let now = try #require(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"))
        for text in ["Sun, 06 Nov 1994 08:51:37 GMT", "Sunday, 06-Nov-94 08:51:37 GMT", "Sun Nov  6 08:51:37 1994"] {
            #expect(RetryAfter.delay(from: text, now: now) == .seconds(120), "\(text)")
        }
    }

    @Test("checksums parse as ALGO=HEX and reject bad input")
    func checksums() throws {
        #expect(
            try Checksum(parsing: "sha256=" + String(repeating: "A", count: 64)).hex
                == String(repeating: "a", count: 64))
        #expect(try Checksum(parsing: "SHA-1:" + String(repeating: "0", count: 40)).algorithm == .sha1)
        #expect(
            try Checksum(parsing: "md5=" + String(repeating: "f", count: 32)).description == "md5="
                + String(repeating: "f", count: 32))
        for bad in ["sha256=abc", "crc32=00000000", "sha256", "md5=" + String(repeating: "g", count: 32)] {
            #expect(throws: DownloadError.self) { try Checksum(parsing: bad) }
        }
    }

    @Test("request headers parse as 'Name: value' and reject injection")
    func headerFields() throws {
        #expect(
            try HTTPHeaderField(parsing: "Authorization: Bearer x:y")
                == .init(name: "Authorization", value: "Bearer x:y"))
        for bad in ["NoColon", ": empty", "Bad Name: x", "X: a\r\nInjected: 1"] {
            #expect(throws: DownloadError.self) { try HTTPHeaderField(parsing: bad) }
        }
    }

    @Test("a rate-limit field is told by its name in any case; other names, shorter ones and look-alikes are not")
    func rateLimitNames() {
        for name in ["RateLimit", "RateLimit-Policy", "X-RateLimit-Remaining", "x-ratelimit-reset", "XRATELIMITX"] {
            #expect(HTTPSession.namesRateLimit(name), "\(name)")
        }
        for name in [
            "", "ratelimi", "Content-Length", "Retry-After", "Rate-Limit", "ratelim1t", "RÄTELIMIT", "r@telimit",
        ] {
            #expect(!HTTPSession.namesRateLimit(name), "\(name)")
        }
    }
}
