import ArgumentParser
import Foundation
import HaulKit

/// `haul info`: everything known about one download.
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show one download: URL, file, state, progress, size, checksum, times and last error.",
        discussion: """
            Examples:
              haul info 3
              haul info 3 --json | jq .receivedBytes
            """)

    @Argument(help: "The download's id (see 'haul list').")
    var id: DownloadID

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var state: StateOptions

    func run() async throws {
        let manager = try await state.openEditor()
        let snapshot = await manager.snapshot(id)
        await manager.shutdown()
        guard let snapshot else {
            Console.error(DownloadError.unknownDownload(id).description)
            throw ExitStatus.usage
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            Console.out(String(decoding: try encoder.encode(DownloadSummary(snapshot)), as: UTF8.self) + "\n")
            return
        }
        Console.out(Self.describe(snapshot))
    }

    static func describe(_ snapshot: DownloadSnapshot) -> String {
        var rows: [(String, String)] = [("URL", snapshot.url.absoluteString)]
        if let final = snapshot.finalURL, final != snapshot.url { rows.append(("Redirected to", final.absoluteString)) }
        rows.append(("File", snapshot.file?.path ?? "(named when the server answers)"))
        rows.append(("State", snapshot.state.rawValue + (List.note(snapshot).map { " (\($0))" } ?? "")))
        if let owner = snapshot.owner { rows.append(("Owner", owner)) }
        let received =
            snapshot.state == .completed ? (snapshot.totalBytes ?? snapshot.receivedBytes) : snapshot.receivedBytes
        var progress = ByteFormat.size(received)
        if let total = snapshot.totalBytes {
            progress += " of \(ByteFormat.size(total))"
            if let fraction = snapshot.fraction { progress += String(format: " (%.1f%%)", fraction * 100) }
        }
        rows.append(("Progress", progress))
        let connections = snapshot.options.connections
        rows.append(
            ("Connections", snapshot.options.adaptiveConnections ? "auto (up to \(connections))" : String(connections)))
        if let limit = snapshot.options.speedLimit { rows.append(("Speed limit", ByteFormat.rate(Double(limit)))) }
        if let checksum = snapshot.options.checksum { rows.append(("Checksum", checksum.description)) }
        if let sha256 = snapshot.sha256 { rows.append(("SHA-256", sha256)) }
        if let verification = snapshot.verification { rows.append(("Integrity", verification.description)) }
        for header in snapshot.options.headers { rows.append(("Header", header.description)) }
        if let credentials = snapshot.options.credentials { rows.append(("Login", credentials.description)) }
        for mirror in snapshot.options.mirrors { rows.append(("Mirror", mirror.absoluteString)) }
        let dates = DateFormatter()
        dates.dateFormat = "yyyy-MM-dd HH:mm:ss"
        rows.append(("Added", dates.string(from: snapshot.createdAt)))
        if let started = snapshot.startedAt { rows.append(("Started", dates.string(from: started))) }
        if let completed = snapshot.completedAt { rows.append(("Completed", dates.string(from: completed))) }
        if let error = snapshot.lastError { rows.append(("Error", error.description)) }
        var text = "Download #\(snapshot.id)\n"
        for (label, value) in rows { text += "  " + (label + ":").rightPadded(to: 15) + value + "\n" }
        return text
    }
}
