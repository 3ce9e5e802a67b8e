import ArgumentParser
import Foundation
import HaulKit

/// `haul list`: the downloads in the database.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List downloads: id, state, progress, size and name.",
        usage: "haul list [--state <STATE> ...] [--json] [<options>]",
        discussion: """
            Examples:
              haul list
              haul list --state failed --state paused
              haul list --json | jq -r 'select(.state == "completed") | .file'
            """)

    @Option(
        name: .customLong("state"),
        help: ArgumentHelp(
            "Only downloads in STATE (repeatable).",
            valueName: "STATE"))
    var states: [DownloadState] = []

    @Flag(help: "One JSON object per download (NDJSON).")
    var json = false

    @OptionGroup var state: StateOptions

    func run() async throws {
        let manager = try await state.openEditor()
        let ids = await manager.ids(in: states.isEmpty ? Set(DownloadState.allCases) : Set(states))
        // In a shared queue, which worker runs each download.
        let shared = (try? state.sharedQueue()) != nil
        let workers: [DownloadID: String]
        do {
            workers = shared ? try await manager.workers() : [:]
        } catch {
            Console.error(error.description)
            await manager.shutdown()
            throw ExitStatus.fileSystem
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        if !json, !ids.isEmpty {
            Console.out(
                "  ID  STATE        DONE  SIZE                    \(shared ? "WORKER                NAME" : "NAME")\n")
        }
        // Made and written a few thousand rows at a time.
        try await manager.forEachBatch(ofSnapshots: ids) { snapshots in
            var text = ""
            text.reserveCapacity(snapshots.count * 80)
            for snapshot in snapshots {
                if json {
                    var summary = DownloadSummary(snapshot)
                    summary.worker = workers[snapshot.id]
                    text += String(decoding: try encoder.encode(summary), as: UTF8.self) + "\n"
                } else {
                    Self.appendRow(snapshot, worker: shared ? workers[snapshot.id] ?? "-" : nil, to: &text)
                }
            }
            Console.out(text)
        }
        await manager.shutdown()
    }

    /// Appends the download's line (id, state, progress, size, the worker of a shared queue, name) to `text`.
    static func appendRow(_ snapshot: DownloadSnapshot, worker: String? = nil, to text: inout String) {
        let percent = snapshot.fraction.map { "\(Int(($0 * 100).rounded(.down)))%" } ?? "-"
        let size: String
        switch (snapshot.state, snapshot.totalBytes) {
        case (.completed, let total?): size = ByteFormat.size(total)
        case (_, let total?): size = "\(ByteFormat.size(snapshot.receivedBytes))/\(ByteFormat.size(total))"
        case (_, nil): size = snapshot.receivedBytes > 0 ? ByteFormat.size(snapshot.receivedBytes) : "-"
        }
        var name = snapshot.file?.path ?? snapshot.url.absoluteString
        if snapshot.state == .failed, let error = snapshot.lastError { name += "  (\(error.summary))" }
        if let note = Self.note(snapshot) { name += "  (\(note))" }
        text.append(String(snapshot.id.rawValue), rightAlignedIn: 4)
        text += "  "
        text.append(snapshot.state.rawValue, leftAlignedIn: 11)
        text += "  "
        text.append(percent, rightAlignedIn: 4)
        text += "  "
        text.append(size, leftAlignedIn: 22)
        text += "  "
        if let worker {
            text.append(worker, leftAlignedIn: 20)
            text += "  "
        }
        text += name
        text += "\n"
    }
}

extension List {
    /// What a row says besides its state: who left an interrupted download, how a completed file changed.
    static func note(_ snapshot: DownloadSnapshot) -> String? {
        switch snapshot.state {
        case .interrupted:
            let owner = snapshot.owner ?? "the command that ran it"
            return "\(owner) ended first: run it again, or 'haul resume \(snapshot.id)'"
        case .completed:
            return snapshot.fileChange.map { "the file \($0): 'haul resume \(snapshot.id)'" }
        case .running:
            // "waiting for space: … needed …, … free" (docs/service.md).
            return snapshot.isWaitingForSpace ? snapshot.lastError?.summary : nil
        case .queued, .paused, .failed:
            return nil
        }
    }
}

extension DownloadState: ExpressibleByArgument {}

/// A download as `haul list --json` and `haul info --json` print it.
struct DownloadSummary: Encodable {
    var id: Int64
    var url: String
    var finalURL: String?
    var file: String?
    var state: String
    var receivedBytes: Int64
    var totalBytes: Int64?
    var connections: Int
    var checksum: String?
    /// Extra request headers as `Name: value`, credentials masked.
    var headers: [String]?
    /// The login as `name:***`.
    var credentials: String?
    /// Other URLs of the same file.
    var mirrors: [String]?
    var createdAt: Date
    var startedAt: Date?
    var completedAt: Date?
    var error: JSONRecord.ErrorInfo?
    /// The worker of a shared queue that runs it now (`haul list --database`).
    var worker: String?
    /// The foreground command that owns it (`haul get (pid 4711)`).
    var owner: String?
    /// The SHA-256 of the completed file as Haul wrote it.
    var sha256: String?
    /// How the completed file on disk differs from the one Haul wrote ("is gone").
    var fileChange: String?
    /// What the completed file was verified against ("sha-256 from the server (Repr-Digest)").
    var verification: JSONRecord.Verification?
    /// What a running download waits for: "space" while its file system has no room (the reason is in `error`).
    var waitingFor: String?

    init(_ snapshot: DownloadSnapshot) {
        id = snapshot.id.rawValue
        url = snapshot.url.absoluteString
        finalURL = snapshot.finalURL.flatMap { $0 == snapshot.url ? nil : $0.absoluteString }
        file = snapshot.file?.path
        state = snapshot.state.rawValue
        receivedBytes =
            snapshot.state == .completed ? (snapshot.totalBytes ?? snapshot.receivedBytes) : snapshot.receivedBytes
        totalBytes = snapshot.totalBytes
        connections = snapshot.options.connections
        checksum = snapshot.options.checksum?.description
        headers = snapshot.options.headers.isEmpty ? nil : snapshot.options.headers.map(\.description)
        credentials = snapshot.options.credentials?.description
        mirrors = snapshot.options.mirrors.isEmpty ? nil : snapshot.options.mirrors.map(\.absoluteString)
        createdAt = snapshot.createdAt
        startedAt = snapshot.startedAt
        completedAt = snapshot.completedAt
        error = snapshot.lastError.map(JSONRecord.ErrorInfo.init)
        owner = snapshot.owner
        sha256 = snapshot.sha256
        fileChange = snapshot.fileChange
        verification = snapshot.verification.map(JSONRecord.Verification.init)
        waitingFor = snapshot.isWaitingForSpace ? "space" : nil
    }
}
