extension StringProtocol {
    /// The text without leading and trailing white space (Unicode's, newlines included).
    ///
    /// Native Swift: Foundation's `trimmingCharacters(in:)` goes through `NSString` on Linux, which showed up in
    /// the profile of many small downloads (a few calls per response and per file name).
    package func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
