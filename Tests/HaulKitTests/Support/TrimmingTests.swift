import Testing

@testable import HaulKit

@Suite("Trimming white space")
struct TrimmingTests {
    @Test(
        "the fast path for text that starts and ends with plain ASCII agrees with walking the characters",
        arguments: [
            ("abc", "abc"),
            ("  a b  ", "a b"),
            ("\t\r\nx\r\n", "x"),
            ("\u{00A0}x\u{2003}", "x"),
            ("a\u{00A0}", "a"),
            ("\u{0600}a", "\u{0600}a"),
            ("a\u{0301}", "a\u{0301}"),
            ("\u{001F}a\u{001C}", "\u{001F}a\u{001C}"),
            ("x\u{000B}y", "x\u{000B}y"),
            (" \u{0301}", ""),
            ("\u{2028}", ""),
            ("", ""),
        ])
    func trims(_ text: String, _ expected: String) {
        #expect(text.trimmingWhitespace() == expected)
        #expect(text[...].trimmingWhitespace() == expected)
        let walked = text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
        #expect(String(walked) == expected)
    }
}
