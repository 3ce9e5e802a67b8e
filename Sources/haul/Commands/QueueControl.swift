import ArgumentParser
import Foundation
import HaulKit

/// Which downloads a queue command acts on: ids, or `--all`.
struct Selection: ParsableArguments {
    @Argument(help: "Download ids (see 'haul list').")
    var ids: [DownloadID] = []

    @Flag(help: "Every download.")
    var all = false

    func validate() throws {
        if all, !ids.isEmpty { throw ValidationError("give ids or --all, not both") }
        if !all, ids.isEmpty { throw ValidationError("give at least one download id, or --all") }
    }

    /// The ids to act on, checked against the database; an unknown id is a usage error.
    func resolve(in manager: DownloadManager, states: Set<DownloadState>? = nil) async throws -> [DownloadID] {
        if all { return await manager.ids(in: states ?? Set(DownloadState.allCases)) }
        return try await Self.known(ids, in: manager)
    }

    /// `ids`, checked against the database; an unknown id is a usage error.
    static func known(_ ids: [DownloadID], in manager: DownloadManager) async throws -> [DownloadID] {
        for id in ids where await manager.state(of: id) == nil {
            Console.error(DownloadError.unknownDownload(id).description)
            await manager.shutdown()
            throw ExitStatus.usage
        }
        return ids
    }

    /// Opens the state database, applies `change` to the selected downloads (with `--all`, those in `states`), prints
    /// each one's state and ends with the error's exit status if `change` failed.
    func apply(
        _ state: StateOptions, states: Set<DownloadState>,
        _ change: (DownloadManager, [DownloadID]) async throws(DownloadError) -> Void
    ) async throws {
        let manager = try await state.openEditor()
        let ids = try await resolve(in: manager, states: states)
        var failure: DownloadError?
        do {
            try await change(manager, ids)
        } catch {
            Console.error(error.description)
            failure = error
        }
        await Self.report(ids, in: manager)
        await manager.shutdown()
        if let failure { throw ExitStatus.forFailures([failure]) }
    }

    /// Prints `#ID STATE` for each download, in one write.
    static func report(_ ids: [DownloadID], in manager: DownloadManager) async {
        var text = ""
        for id in ids {
            guard let state = await manager.state(of: id) else { continue }
            text += "#\(id) \(state.rawValue)\n"
        }
        Console.out(text)
    }
}

/// `haul pause`: stop downloads, keeping what they have.
struct Pause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pause downloads; a running 'haul run' or 'haul get' stops them within a second.",
        discussion: """
            Examples:
              haul pause 3
              haul pause --all
            """)

    @OptionGroup var selection: Selection
    @OptionGroup var state: StateOptions

    func run() async throws {
        try await selection.apply(state, states: [.queued, .running]) { manager, ids throws(DownloadError) in
            try await manager.pause(ids)
        }
    }
}

/// `haul resume`: queue paused, failed or interrupted downloads again.
struct Resume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue paused, failed or interrupted downloads again, from the bytes already on disk.",
        discussion: """
            A running 'haul run' picks them up; otherwise start one. An interrupted             download (its 'haul get' ended first) is handed to the queue. A completed             one whose file changed or is gone since is downloaded again.

            Examples:
              haul resume 3 && haul run
              haul resume --all
            """)

    @OptionGroup var selection: Selection
    @OptionGroup var state: StateOptions

    func run() async throws {
        let all = selection.all
        try await selection.apply(state, states: [.paused, .failed, .interrupted]) {
            manager, ids throws(DownloadError) in
            var resumable: [DownloadID] = []
            for id in ids {
                // --all passes over a damaged record (only 'haul remove' helps it); naming one says why.
                if all, await manager.snapshot(id)?.lastError?.code == .damagedRecord { continue }
                resumable.append(id)
            }
            try await manager.resume(resumable)
        }
    }
}

/// `haul remove`: forget downloads, deleting partial data; or prune the history.
struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Forget downloads and delete their partial data; completed files stay unless --delete-file.",
        usage: "haul remove <ids> ... | --all [--delete-file] [<options>]",
        discussion: """
            --completed, --failed and --interrupted prune the history by state             (together: any of them); --older-than keeps what changed more recently             (alone: completed and failed ones).

            Examples:
              haul remove 3
              haul remove 3 4 --delete-file
              haul remove --completed --older-than 7d
              haul remove --all
            """)

    @Argument(help: "Download ids (see 'haul list').")
    var ids: [DownloadID] = []

    @Flag(help: "Every download.")
    var all = false

    @Flag(help: "Every completed download (their files stay).")
    var completed = false

    @Flag(help: "Every failed download.")
    var failed = false

    @Flag(help: "Every interrupted download (its 'haul get' ended first).")
    var interrupted = false

    @Option(
        help: ArgumentHelp(
            "Only downloads that last changed longer ago than DURATION (30m, 12h, 7d, 2w).", valueName: "DURATION"))
    var olderThan: HistoryAge?

    @Flag(help: "Also delete the completed file.")
    var deleteFile = false

    @OptionGroup var state: StateOptions

    /// The states pruned by flag, or nil when ids or --all choose.
    var prunedStates: Set<DownloadState>? {
        var states: Set<DownloadState> = []
        if completed { states.insert(.completed) }
        if failed { states.insert(.failed) }
        if interrupted { states.insert(.interrupted) }
        if states.isEmpty, olderThan != nil, !all { states = [.completed, .failed] }
        return states.isEmpty ? nil : states
    }

    func validate() throws {
        let choices = (ids.isEmpty ? 0 : 1) + (all ? 1 : 0) + (prunedStates != nil && !all ? 1 : 0)
        if choices > 1 { throw ValidationError("give ids, --all, or --completed/--failed/--interrupted; not several") }
        if choices == 0 {
            throw ValidationError("give download ids, --all, or --completed/--failed/--interrupted/--older-than")
        }
        if !ids.isEmpty, olderThan != nil { throw ValidationError("--older-than prunes by state, not by id") }
    }

    func run() async throws {
        let manager = try await state.openEditor()
        let ids: [DownloadID]
        if let states = all ? Set(DownloadState.allCases) : prunedStates {
            var chosen = await manager.ids(in: states)
            if let olderThan {
                let cutoff = Date().addingTimeInterval(-olderThan.seconds)
                chosen = await manager.snapshots(of: chosen).filter { $0.updatedAt < cutoff }.map(\.id)
            }
            ids = chosen
        } else {
            ids = try await Selection.known(self.ids, in: manager)
        }
        var failure: DownloadError?
        do {
            try await manager.remove(ids, deletingFiles: deleteFile)
        } catch {
            Console.error(error.description)
            failure = error
        }
        var text = ""
        for id in ids where await manager.state(of: id) == nil { text += "#\(id) removed\n" }
        Console.out(text)
        await manager.shutdown()
        if let failure { throw ExitStatus.forFailures([failure]) }
    }
}
