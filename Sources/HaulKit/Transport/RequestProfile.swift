/// What every request of one download carries: our headers, the user's headers and credentials, and what a redirect
/// may take along.
struct RequestProfile: Sendable {
    var userAgent: String
    var custom: [HTTPHeaderField]
    var credentials: Credentials?
    var redirects: RedirectPolicy
    /// The download's own request pacing (added to the manager's), if any.
    var pacing: RequestPacing? = nil
    /// How the download gives its slot away while its host makes it wait; nil: it keeps it.
    var slot: SlotYield? = nil

    /// Headers that go to every origin: they identify the client, they do not authorize it.
    private static let unprivileged: Set<String> = ["user-agent", "referer"]
    /// Headers Haul sets itself, which the user's cannot override.
    private static let reserved: Set<String> = ["range", "if-range", "accept-encoding"]

    /// The header fields of a request, ours then the user's. Away from the added URL's origin (and unless redirects
    /// are trusted) only `User-Agent` and `Referer` of the user's go along.
    func fields(range: String?, ifRange: String?, trusted: Bool) -> [(String, String)] {
        var fields: [(String, String)] = []
        // Room for all at once (growing one field at a time was three allocations per request).
        fields.reserveCapacity(4 + custom.count)
        if !custom.contains(where: { $0.name.lowercased() == "user-agent" }) {
            fields.append(("User-Agent", userAgent))
        }
        fields.append(("Accept-Encoding", "identity"))
        if let range {
            fields.append(("Range", range))
            if let ifRange { fields.append(("If-Range", ifRange)) }
        }
        for field in custom {
            let name = field.name.lowercased()
            guard !Self.reserved.contains(name), trusted || Self.unprivileged.contains(name) else { continue }
            fields.append((field.name, field.value))
        }
        return fields
    }
}
