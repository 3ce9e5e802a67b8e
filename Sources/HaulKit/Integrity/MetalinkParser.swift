import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

extension Metalink {
    /// Reads a Metalink document (RFC 5854, or version 3).
    ///
    /// Hostile input is refused with ``DownloadError/Code/invalidRequest`` and a reason, before or while parsing:
    /// more than ``maximumSize`` bytes, any document type declaration (no Metalink needs one; entities are how XML
    /// bombs expand), nesting deeper than 32, more files, URLs or pieces than the limits, a file name that is absolute
    /// or climbs out of its directory (`..`), a size or piece length that is not a positive number, or a hash of the
    /// wrong length. URLs that are not http(s) are skipped.
    public init(parsing data: Data, origin: String = "the Metalink") throws(DownloadError) {
        func refuse(_ reason: String) -> DownloadError { .invalidRequest("\(origin) cannot be used: \(reason)") }
        guard data.count <= Self.maximumSize else {
            throw refuse("it is \(data.count) bytes, more than the \(Self.maximumSize) a Metalink may be")
        }
        if Self.declaresDocumentType(data) {
            throw refuse("it declares a document type or entities, which no Metalink needs (refused: entity expansion)")
        }
        let reader = MetalinkReader()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        let parsed = parser.parse()
        if let failure = reader.failure { throw refuse(failure) }
        guard parsed else {
            throw refuse(
                "it is not well-formed XML (\(parser.parserError.map { "\($0.localizedDescription)" } ?? "?"))")
        }
        guard let version = reader.version else { throw refuse("it is not a Metalink (no metalink element)") }
        guard reader.ended else { throw refuse("it is not well-formed XML: it ends before its metalink element does") }
        guard !reader.files.isEmpty else { throw refuse("it names no file") }
        self.version = version
        files = reader.files
    }

    /// Whether the bytes contain `<!DOCTYPE` or `<!ENTITY` (in any case).
    static func declaresDocumentType(_ data: Data) -> Bool {
        ["<!doctype", "<!entity"].contains { ASCIISearch.contains(data, lowercased: Array($0.utf8)) }
    }

    /// Whether `name` is a relative path that stays inside the directory it is saved in.
    static func isSafe(name: String) -> Bool {
        guard !name.isEmpty, !name.hasPrefix("/"), !name.contains("\\"), name.utf8.count <= 4096,
            !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return false }
        return name.split(separator: "/", omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && $0 != "." && $0 != ".."
        }
    }
}

/// The XML parser's delegate: builds the files as elements end, and stops at the first thing refused.
private final class MetalinkReader: NSObject, XMLParserDelegate {
    static let v4Namespace = "urn:ietf:params:xml:ns:metalink"
    static let v3Namespace = "http://www.metalinker.org/"

    var version: Metalink.Version?
    var files: [Metalink.File] = []
    var failure: String?
    /// The root element ended (a truncated document never does).
    var ended = false

    private var path: [String] = []
    private var text = ""
    private var file: Metalink.File?
    private var hashType: String?
    private var pieceLength: Int64?
    private var pieceType: DigestAlgorithm?
    private var pieceHashes: [String] = []
    private var sourceAttributes: [String: String] = [:]

    private func fail(_ reason: String, _ parser: XMLParser) {
        guard failure == nil else { return }
        failure = reason
        parser.abortParsing()
    }

    func parser(
        _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        path.append(element)
        text = ""
        guard path.count <= 32 else { return fail("its elements nest more than 32 deep", parser) }
        if path.count == 1 {
            guard element == "metalink" else { return fail("its root element is \(element), not metalink", parser) }
            switch namespaceURI {
            case Self.v4Namespace: version = .rfc5854
            case Self.v3Namespace: version = .v3
            default: return fail("its namespace '\(namespaceURI ?? "")' is not a Metalink's", parser)
            }
            return
        }
        switch element {
        case "file":
            guard let name = attributes["name"], Metalink.isSafe(name: name) else {
                return fail(
                    "a file's name '\(attributes["name"] ?? "")' is missing, absolute or leaves its directory", parser)
            }
            guard files.count < Metalink.maximumFiles else {
                return fail("it names more than \(Metalink.maximumFiles) files", parser)
            }
            file = Metalink.File(name: name, size: nil, hashes: [:], pieces: nil, sources: [])
        case "hash":
            hashType = attributes["type"]
        case "pieces":
            guard let length = attributes["length"].flatMap({ Int64($0) }), length >= 1024 else {
                return fail("a piece length '\(attributes["length"] ?? "")' is not a number of at least 1024", parser)
            }
            guard let type = attributes["type"].flatMap({ DigestAlgorithm(headerName: $0) }) else {
                return fail("a piece hash type '\(attributes["type"] ?? "")' is not one Haul knows", parser)
            }
            pieceLength = length
            pieceType = type
            pieceHashes = []
        case "url":
            sourceAttributes = attributes
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard failure == nil, path.count > 1 else { return }
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        guard failure == nil else { return }
        defer {
            path.removeLast()
            text = ""
        }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if path.count == 1 { ended = true }
        guard var current = file else { return }
        switch element {
        case "file":
            files.append(current)
            file = nil
            return
        case "size":
            guard let size = Int64(value), size >= 0 else {
                return fail("a file's size '\(value)' is not a number", parser)
            }
            current.size = size
        case "hash" where path.dropLast().last == "pieces":
            guard let type = pieceType, let hex = Self.hex(value, type) else {
                return fail("a piece hash '\(value)' is not a \(pieceType?.rawValue ?? "known") digest", parser)
            }
            guard pieceHashes.count < Metalink.maximumPieces else {
                return fail("a file has more than \(Metalink.maximumPieces) pieces", parser)
            }
            pieceHashes.append(hex)
        case "hash":
            // An unknown algorithm (a torrent's, say) is skipped; a known one must be a digest of its length.
            guard let algorithm = hashType.flatMap({ DigestAlgorithm(headerName: $0) }) else { break }
            guard let hex = Self.hex(value, algorithm) else {
                return fail("its \(algorithm) hash '\(value)' is not \(algorithm.byteCount * 2) hex digits", parser)
            }
            current.hashes[algorithm] = hex
        case "pieces":
            if let pieceType, let pieceLength, !pieceHashes.isEmpty {
                current.pieces = PieceHashes(algorithm: pieceType, length: pieceLength, hashes: pieceHashes)
            }
        case "url":
            guard current.sources.count < Metalink.maximumSources else {
                return fail("a file has more than \(Metalink.maximumSources) URLs", parser)
            }
            guard let url = URL(string: value), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host != nil
            else { break }
            let priority: Int
            if version == .v3 {
                // Version 3: preference 0…100, higher first.
                priority =
                    sourceAttributes["preference"].flatMap { Int($0) }.map { 101 - min(100, max(0, $0)) } ?? 999_999
            } else {
                priority = sourceAttributes["priority"].flatMap { Int($0) }.map { max(1, $0) } ?? 999_999
            }
            current.sources.append(.init(url: url, priority: priority, location: sourceAttributes["location"]))
        default:
            return
        }
        file = current
    }

    func parserDidEndDocument(_ parser: XMLParser) {
        for index in files.indices {
            // Best first; equal priorities keep the document's order.
            files[index].sources = files[index].sources.enumerated()
                .sorted { ($0.element.priority, $0.offset) < ($1.element.priority, $1.offset) }.map(\.element)
        }
    }

    /// `value` as lowercase hex if it is a digest of `algorithm`'s length.
    static func hex(_ value: String, _ algorithm: DigestAlgorithm) -> String? {
        let lowered = value.lowercased()
        guard lowered.count == algorithm.byteCount * 2, lowered.allSatisfy(\.isHexDigit) else { return nil }
        return lowered
    }
}
