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

    @Test("a name equals its lowercase spelling in any case, and nothing longer, shorter or one byte apart")
    func equals() {
        let name = Array("x-amz-checksum-type".utf8)
        for text in ["x-amz-checksum-type", "X-Amz-Checksum-Type", "X-AMZ-CHECKSUM-TYPE"] {
            #expect(ASCIISearch.equals(Array(text.utf8), lowercased: name), "\(text)")
        }
        for text in ["", "x-amz-checksum-typ", "x-amz-checksum-types", "x_amz-checksum-type", "x-amz-checksum-typé"] {
            #expect(!ASCIISearch.equals(Array(text.utf8), lowercased: name), "\(text)")
        }
        // 0x0D | 0x20 is "-": a control byte is not taken for the dash.
        #expect(!ASCIISearch.equals(Array("x".utf8) + [0x0D] + Array("amz-checksum-type".utf8), lowercased: name))
    }
}
