/// A URL up to its query: what ``DownloadStore/fetchRecords(urlBases:)`` finds records by, so that a download asked
/// for again with another signature in its query is found (the manager then compares its resource key).
enum URLBase {
    /// `url` up to its first `?` (all of it without a query).
    static func of(_ url: String) -> String { url.firstIndex(of: "?").map { String(url[..<$0]) } ?? url }
}
