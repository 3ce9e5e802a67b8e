/// The headers of every request of a download: ours, then the user's (which cannot override the range logic).
struct RequestHeaders: Sendable {
    var userAgent: String
    var custom: [HTTPHeaderField]

    func fields(range: String?, ifRange: String?) -> [(String, String)] {
        var fields: [(String, String)] = []
        if !custom.contains(where: { $0.name.lowercased() == "user-agent" }) {
            fields.append(("User-Agent", userAgent))
        }
        fields.append(("Accept-Encoding", "identity"))
        if let range {
            fields.append(("Range", range))
            if let ifRange { fields.append(("If-Range", ifRange)) }
        }
        for field in custom where !["range", "if-range", "accept-encoding"].contains(field.name.lowercased()) {
            fields.append((field.name, field.value))
        }
        return fields
    }
}
