import Foundation
import HaulKit

/// `haul get --spider`: asks about each URL and downloads nothing, as wget's `--spider`.
enum Spider {
    /// One answer as `--json` prints it.
    struct Report: Encodable {
        var type = "spider"
        var url: String
        var finalURL: String?
        var status: Int?
        var size: Int64?
        var acceptsRanges: Bool?
        var etag: String?
        var lastModified: String?
        var name: String?
        var error: String?
    }

    /// Probes every URL (in order), prints a line or a JSON object for each, and returns the failures.
    static func run(
        _ additions: [(URL, DownloadDestination?, DownloadOptions)], manager: DownloadManager, json: Bool
    )
        async -> [DownloadError]
    {
        var failures: [DownloadError] = []
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for (url, _, options) in additions {
            var report = Report(url: Credentials.embedded(in: url)?.url.absoluteString ?? url.absoluteString)
            do {
                let file = try await manager.probe(url, options: options)
                report.finalURL = file.finalURL == file.url ? nil : file.finalURL.absoluteString
                report.status = file.status
                report.size = file.size
                report.acceptsRanges = file.acceptsRanges
                report.etag = file.etag
                report.lastModified = file.lastModified
                report.name = file.suggestedName
                if !json {
                    let size = file.size.map { ByteFormat.size($0) } ?? "size unknown"
                    let ranges = file.acceptsRanges ? "resumable (ranges)" : "not resumable (no ranges)"
                    let moved = report.finalURL.map { " via \($0)" } ?? ""
                    Console.out("\(report.url): \(size), \(ranges), name \(file.suggestedName)\(moved)\n")
                }
            } catch {
                failures.append(error)
                report.error = error.description
                if !json { Console.error("\(report.url): \(error.description)") }
            }
            if json, let data = try? encoder.encode(report) {
                Console.out(String(decoding: data, as: UTF8.self) + "\n")
            }
        }
        return failures
    }
}
