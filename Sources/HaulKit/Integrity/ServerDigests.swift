import NIOHTTP1
import RawStructuredFieldValues

/// The digests a response states, from its headers: of the whole representation (`Repr-Digest`, RFC 3230's
/// `Digest`, `x-goog-hash`, a full-object `x-amz-checksum-*`), and of this response's own content (`Content-Digest`,
/// `Content-MD5`: a `206`'s covers the bytes of that part).
///
/// RFC 9530's fields are RFC 8941 dictionaries, parsed with swift-http-structured-headers; one that does not parse,
/// or a value of the wrong length, is ignored (as the RFC asks), as are algorithms Haul does not know.
struct ServerDigests: Sendable, Hashable {
    /// Digests of the whole representation (the complete file as the server stores it, content coding included).
    var representation: [ExpectedDigest] = []
    /// Digests of this response's content (its body bytes).
    var content: [ExpectedDigest] = []

    var isEmpty: Bool { representation.isEmpty && content.isEmpty }

    /// Reads the digest fields among `fields` (name, value; names in any case; a field repeated on several lines
    /// counts as one, its values joined with commas).
    init(fields: [(name: String, value: String)]) {
        func values(_ name: String) -> String? {
            let found = fields.filter { $0.name.lowercased() == name }.map(\.value)
            return found.isEmpty ? nil : found.joined(separator: ", ")
        }
        if let field = values("repr-digest") {
            representation += Self.structured(field, header: "Repr-Digest")
        }
        if let field = values("digest") {
            representation += Self.rfc3230(field)
        }
        if let field = values("x-goog-hash") {
            representation += Self.tokens(field, header: "x-goog-hash").filter {
                $0.algorithm == .crc32c || $0.algorithm == .md5
            }
        }
        representation += Self.amazon(values)
        if let field = values("content-digest") {
            content += Self.structured(field, header: "Content-Digest")
        }
        if let field = values("content-md5"), let digest = ExpectedDigest(.md5, base64: field, header: "Content-MD5") {
            content.append(digest)
        }
    }

    init() {}

    /// An RFC 9530 dictionary: `sha-256=:BASE64:, sha-512=:BASE64:`.
    static func structured(_ field: String, header: String) -> [ExpectedDigest] {
        var parser = StructuredFieldValueParser(Array(field.utf8))
        guard let dictionary = try? parser.parseDictionaryFieldValue() else { return [] }
        return dictionary.compactMap { key, member in
            guard let algorithm = DigestAlgorithm(headerName: key), case .item(let item) = member,
                case .undecodedByteSequence(let base64) = item.rfc9651BareItem
            else { return nil }
            return ExpectedDigest(algorithm, base64: base64, header: header)
        }
    }

    /// RFC 3230's `Digest: SHA-256=BASE64,MD5=BASE64` (instance digests: the whole representation).
    static func rfc3230(_ field: String) -> [ExpectedDigest] { tokens(field, header: "Digest") }

    /// Comma-separated `name=BASE64` pairs (RFC 3230, `x-goog-hash`); base64 keeps its `=` padding, so each pair is
    /// split at its first `=`.
    static func tokens(_ field: String, header: String) -> [ExpectedDigest] {
        field.split(separator: ",").compactMap { pair in
            guard let equals = pair.firstIndex(of: "="),
                let algorithm = DigestAlgorithm(headerName: pair[..<equals].trimmingWhitespace())
            else { return nil }
            return ExpectedDigest(algorithm, base64: pair[pair.index(after: equals)...], header: header)
        }
    }

    /// `x-amz-checksum-sha256` and `x-amz-checksum-crc32c`, only for an object whose checksum covers the whole object:
    /// `x-amz-checksum-type: FULL_OBJECT`, or no type and a value without the `-N` of a multipart (composite) one.
    static func amazon(_ values: (String) -> String?) -> [ExpectedDigest] {
        let type = values("x-amz-checksum-type")?.trimmingWhitespace().uppercased()
        guard type == nil || type == "FULL_OBJECT" else { return [] }
        let headers: [(String, DigestAlgorithm)] = [
            ("x-amz-checksum-sha256", .sha256), ("x-amz-checksum-crc32c", .crc32c),
        ]
        return headers.compactMap { name, algorithm in
            guard let value = values(name), type != nil || !value.contains("-") else { return nil }
            return ExpectedDigest(algorithm, base64: value, header: name)
        }
    }
}

extension ServerDigests {
    /// The digests among a response's headers; none when it has no digest field (the common case, checked first).
    init(_ headers: HTTPHeaders) {
        // Every response's fields pass here: their names are compared as bytes, without a lowercased copy each.
        let fields = headers.filter { Self.isDigestField($0.name) || Self.isChecksumType($0.name) }
        guard fields.contains(where: { !Self.isChecksumType($0.name) }) else {
            self.init()
            return
        }
        self.init(fields: fields.map { ($0.name, $0.value) })
    }

    /// The fields that state a digest, lowercased.
    private static let digestFieldNames = [
        "repr-digest", "digest", "x-goog-hash", "x-amz-checksum-sha256", "x-amz-checksum-crc32c", "content-digest",
        "content-md5",
    ].map { Array($0.utf8) }

    private static let checksumTypeName = Array("x-amz-checksum-type".utf8)

    /// Whether `name` (in any case) is one of ``digestFieldNames``.
    static func isDigestField(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { bytes in digestFieldNames.contains { ASCIISearch.equals(bytes, lowercased: $0) } }
    }

    /// Whether `name` (in any case) is `x-amz-checksum-type`, which says what `x-amz-checksum-*` covers.
    static func isChecksumType(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { ASCIISearch.equals($0, lowercased: checksumTypeName) }
    }
}
