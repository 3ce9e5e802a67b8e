/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): a scheme and its parameters.
struct AuthenticationChallenge: Sendable, Hashable {
    /// The scheme, lower-cased (`basic`, `digest`, …).
    var scheme: String
    /// The parameters, names lower-cased, quoted values unquoted.
    var parameters: [String: String]

    /// Every challenge in the header values (one value may hold several, separated by commas).
    static func parse(_ values: [String]) -> [AuthenticationChallenge] {
        values.flatMap { parse(Substring($0)) }
    }

    private static func parse(_ text: Substring) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        var rest = text
        func skip(_ characters: Set<Character>) { rest = rest.drop { characters.contains($0) } }
        func token() -> Substring {
            let end = rest.firstIndex { $0 == " " || $0 == "\t" || $0 == "," || $0 == "=" || $0 == "\"" }
            let word = rest[..<(end ?? rest.endIndex)]
            rest = rest[(end ?? rest.endIndex)...]
            return word
        }
        while true {
            skip([" ", "\t", ","])
            guard !rest.isEmpty else { break }
            let word = token()
            guard !word.isEmpty else {
                rest = rest.dropFirst()  // a stray character: skip it
                continue
            }
            skip([" ", "\t"])
            if rest.first == "=", !challenges.isEmpty {
                // name=value (or the end of a token68, which Basic and Digest do not use)
                rest = rest.dropFirst()
                skip([" ", "\t"])
                let value = rest.first == "\"" ? QuotedString.read(from: &rest) : String(token())
                challenges[challenges.count - 1].parameters[word.lowercased()] = value
            } else {
                challenges.append(AuthenticationChallenge(scheme: word.lowercased(), parameters: [:]))
            }
        }
        return challenges
    }
}
