extension StringProtocol {
    /// The text without leading and trailing white space (Unicode's, newlines included).
    ///
    /// Native Swift: Foundation's `trimmingCharacters(in:)` goes through `NSString` on Linux, which showed up in
    /// the profile of many small downloads (a few calls per response and per file name). Text that starts and ends
    /// with an ASCII character that is not white space, as header values almost always do, is returned without walking
    /// its characters.
    package func trimmingWhitespace() -> String {
        if let head = unicodeScalars.first, let tail = unicodeScalars.last, Self.isPlainASCII(head),
            Self.isPlainASCII(tail)
        {
            // A character is white space by its first scalar. The last one starts with that ASCII scalar or with a
            // prepended mark (combining marks only follow), and no prepended mark is white space.
            return String(self)
        }
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }

    /// An ASCII scalar that is not white space: neither U+0009–U+000D nor the space.
    private static func isPlainASCII(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && scalar != " " && !("\u{09}"..."\u{0D}").contains(scalar)
    }
}
