import Foundation
import Testing

@testable import HaulKit

/// ``ASCIISearch``: ASCII text found in bytes whatever the case of its letters, and nothing else.
@Suite("Finding ASCII text in any case")
struct ASCIISearchTests {
    @Test("found at the start, in the middle and at the end, letters in any case; not found when one byte differs")
    func found() {
        let needle = Array("<!doctype".utf8)
        for text in ["<!DOCTYPE x>", "a<!DocType", "xx<!doctype"] {
            #expect(ASCIISearch.contains(Array(text.utf8), lowercased: needle), "\(text)")
            #expect(ASCIISearch.contains(Data(text.utf8), lowercased: needle), "\(text) as Data")
        }
        for text in ["", "<!doctyp", "<!doc type", "<!DOCTYPÉ", "<?doctype", "<\u{01}doctype"] {
            #expect(!ASCIISearch.contains(Array(text.utf8), lowercased: needle), "\(text)")
        }
        // A byte that `| 0x20` would turn into a non-letter of the needle does not match it (0x1C → "<", 0x01 → "!").
        #expect(!ASCIISearch.contains([0x1C, 0x01] + Array("doctype".utf8), lowercased: needle))
        #expect(ASCIISearch.contains([UInt8](), lowercased: []), "an empty needle is in anything")
    }
}
