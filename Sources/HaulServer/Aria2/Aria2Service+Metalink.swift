import Foundation
import HaulKit

extension Aria2Service {
    /// `aria2.addMetalink(metalink[, options[, position]])`: `metalink` is a Metalink document (RFC 5854 or version
    /// 3) in base64; one download per file, each under `dir` by its name, from its URLs by priority, checked against
    /// its hashes and piece hashes. Returns the GIDs, one per file, in the document's order. A hostile document
    /// (entities, too large, a name that leaves the directory) is refused with the reason.
    func addMetalink(_ params: Parameters) async throws(RPCError) -> JSONValue {
        guard let text = params.string(0) else { throw .failed("addMetalink expects a base64-encoded Metalink") }
        guard text.utf8.count <= (Metalink.maximumSize / 3 + 1) * 4 else {
            throw .failed("the Metalink is more than the \(Metalink.maximumSize) bytes a Metalink may be")
        }
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
            throw .failed("addMetalink's first parameter is not base64")
        }
        let metalink: Metalink
        do {
            metalink = try Metalink(parsing: data)
        } catch {
            throw .failed(error.summary)
        }
        let given = params.values.count > 1 ? (params.values[1].objectValue ?? [:]) : [:]
        var base = DownloadOptions()
        var directory: String?
        var startPaused = false
        var split: Int?
        var perServer: Int?
        for (name, value) in given {
            if name == "header" {
                base.headers += try Aria2Options.headers(value)
                continue
            }
            let text = try Aria2Options.text(value, option: name)
            switch name {
            case "dir": directory = text
            case "split": split = try Aria2Options.integer(text, option: name, in: 1...32)
            case "max-connection-per-server": perServer = try Aria2Options.integer(text, option: name, in: 1...32)
            case "max-download-limit": base.speedLimit = try Aria2Options.speed(text, option: name)
            case "pause": startPaused = try Aria2Options.boolean(text, option: name)
            default: continue
            }
        }
        Aria2Options.setConnections(&base, split: split, perServer: perServer)
        let folder = try jail.directory(directory)
        var additions: [(URL, DownloadDestination, DownloadOptions)] = []
        for file in metalink.files {
            guard let first = file.sources.first else {
                throw .failed("the Metalink gives no http(s) URL for \(file.name)")
            }
            additions.append((first.url, .file(try jail.file(file.name, in: folder)), file.options(base)))
        }
        var ids: [DownloadID] = []
        try await managing { () async throws(DownloadError) in
            for (url, destination, options) in additions {
                ids.append(try await manager.add(url, to: destination, options: options, paused: startPaused))
            }
        }
        return .array(ids.map { .string(GID($0).description) })
    }
}
