/// HTTP's quoted-string (RFC 9110 §5.6.4), as header parameters use it (`Content-Disposition`, `WWW-Authenticate`).
enum QuotedString {
    /// Reads the quoted-string at the start of `text` (its first character is `"`): returns the content with
    /// backslash escapes undone, and leaves `text` just after the closing quote, or at its end when there is none
    /// (tolerated, as browsers do).
    static func read(from text: inout Substring) -> String {
        var value = ""
        var escaped = false
        text = text.dropFirst()  // the opening quote
        while let character = text.first {
            text = text.dropFirst()
            if escaped {
                value.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                break
            } else {
                value.append(character)
            }
        }
        return value
    }
}
