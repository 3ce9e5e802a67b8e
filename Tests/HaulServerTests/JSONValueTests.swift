import Foundation
import Testing

@testable import HaulServer

@Suite("JSON values")
struct JSONValueTests {
    @Test("what the writer writes, the parser reads back: escapes, control characters, Unicode, numbers")
    func roundTrip() throws {
        let value: JSONValue = [
            "plain": "0000000000000001", "quote": "say \"hi\"", "slash": "a\\b/c", "controls": "\n\r\t\u{01}\u{1f}",
            "unicode": "Zürich 東京 🚀", "numbers": [0, -12, .integer(Int64.max), .double(1.5), .double(.nan)],
            "nested": ["empty": [], "object": [:], "null": .null, "flags": [true, false]],
        ]
        let parsed = try #require(JSONValue(parsing: value.jsonData))
        var expected = value
        if case .object(var fields) = expected {
            // NaN has no JSON form: it is written as null.
            fields["numbers"] = [0, -12, .integer(Int64.max), .double(1.5), .null]
            expected = .object(fields)
        }
        #expect(parsed == expected)
        #expect(JSONValue.string("\u{01}").jsonText == #""\u0001""#)
    }
}
