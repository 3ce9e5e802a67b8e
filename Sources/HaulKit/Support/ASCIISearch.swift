/// Finding ASCII text in bytes with its letters in any case, for what a protocol defines as case-insensitive ASCII (a
/// header field's name, an XML declaration): no lowercased copy and no Foundation search.
enum ASCIISearch {
    /// Whether `bytes` contain `needle`, whose letters are lowercase: each of its letters matches itself or its
    /// capital, any other byte only itself.
    static func contains(_ bytes: some RandomAccessCollection<UInt8>, lowercased needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard bytes.count >= needle.count else { return false }
        var start = bytes.startIndex
        let last = bytes.index(bytes.endIndex, offsetBy: -needle.count)
        while true {
            var index = start
            var matched = 0
            while matched < needle.count, Self.matches(bytes[index], needle[matched]) {
                index = bytes.index(after: index)
                matched += 1
            }
            if matched == needle.count { return true }
            if start == last { return false }
            start = bytes.index(after: start)
        }
    }

    /// Whether `bytes` are `name`, whose letters are lowercase, in any case (a header field's name).
    static func equals(_ bytes: some RandomAccessCollection<UInt8>, lowercased name: [UInt8]) -> Bool {
        guard bytes.count == name.count else { return false }
        return zip(bytes, name).allSatisfy { Self.matches($0, $1) }
    }

    /// Whether `byte` is `lowercase`, or its capital when it is a letter.
    private static func matches(_ byte: UInt8, _ lowercase: UInt8) -> Bool {
        byte == lowercase || (byte | 0x20 == lowercase && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lowercase))
    }
}
