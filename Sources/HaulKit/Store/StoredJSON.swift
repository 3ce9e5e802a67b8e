import Foundation

/// The JSON of the stored JSON columns (options, destination, segment plan): GRDB's defaults for `Codable`
/// records, which earlier versions wrote through them, so existing databases read back unchanged.
package enum StoredJSON {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dataEncodingStrategy = .base64
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.nonConformingFloatEncodingStrategy = .throw
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// A checkpoint's segment plan as stored, or nil for none.
    package static func planText(_ segments: [Segment]?) throws(DownloadError) -> String? {
        do {
            return try segments.map { String(decoding: try encoder().encode($0), as: UTF8.self) }
        } catch {
            throw .internalError("cannot encode a segment plan: \(error)")
        }
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dataDecodingStrategy = .base64
        decoder.dateDecodingStrategy = .millisecondsSince1970
        decoder.nonConformingFloatDecodingStrategy = .throw
        return decoder
    }
}
