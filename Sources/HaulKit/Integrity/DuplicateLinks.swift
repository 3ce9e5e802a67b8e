import Foundation

/// RFC 6249 (Metalink/HTTP): the mirrors a server names for the file it sends, `Link: <URL>; rel=duplicate; pri=N`.
enum DuplicateLinks {
    /// The http(s) URLs that `values` (a response's `Link` fields) name with the relation `duplicate`, lowest `pri`
    /// first (those without come last), relative ones resolved against `base`.
    static func parse(_ values: [String], base: URL?) -> [String] {
        var found: [(url: String, priority: Int, order: Int)] = []
        for value in values {
            for link in links(in: value) {
                let relations = (link.parameters["rel"] ?? "").lowercased().split(separator: " ")
                guard relations.contains("duplicate"),
                    let url = URL(string: link.target, relativeTo: base)?.absoluteURL,
                    let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil
                else { continue }
                let priority = link.parameters["pri"].flatMap { Int($0) } ?? 999_999
                found.append((url.absoluteString, priority, found.count))
            }
        }
        return found.sorted { ($0.priority, $0.order) < ($1.priority, $1.order) }.map(\.url)
    }

    /// The link-values of one `Link` field: `<target>` and its parameters (names lowercased, quotes removed).
    static func links(in field: String) -> [(target: String, parameters: [String: String])] {
        var result: [(String, [String: String])] = []
        var rest = Substring(field)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            let target = String(rest[rest.index(after: open)..<close])
            rest = rest[rest.index(after: close)...]
            // The parameters run to the next comma outside quotes.
            var parameters: [String: String] = [:]
            var end = rest.endIndex
            var quoted = false
            for index in rest.indices {
                if rest[index] == "\"" { quoted.toggle() }
                if rest[index] == ",", !quoted {
                    end = index
                    break
                }
            }
            for piece in rest[..<end].split(separator: ";") {
                let parts = piece.split(separator: "=", maxSplits: 1)
                guard let name = parts.first?.trimmingWhitespace().lowercased(), !name.isEmpty else { continue }
                let value = parts.count > 1 ? parts[1].trimmingWhitespace() : ""
                parameters[name] = value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            result.append((target, parameters))
            rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[rest.endIndex...]
        }
        return result
    }
}
