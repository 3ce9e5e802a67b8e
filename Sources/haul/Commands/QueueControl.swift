import ArgumentParser
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

/// `haul resume`: queue paused or failed downloads again.
struct Resume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue paused or failed downloads again; they continue from the bytes already on disk.",
        discussion: """
            A running 'haul run' picks them up; otherwise start one.

            Examples:
              haul resume 3 && haul run
              haul resume --all
            """)

    @OptionGroup var selection: Selection
    @OptionGroup var state: StateOptions

    func run() async throws {
        let all = selection.all
        try await selection.apply(state, states: [.paused, .failed]) { manager, ids throws(DownloadError) in
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

/// `haul remove`: forget downloads, deleting partial data.
struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Forget downloads and delete their partial data; completed files stay unless --delete-file.",
        usage: "haul remove <ids> ... | --all [--delete-file] [<options>]",
        discussion: """
            Examples:
              haul remove 3
              haul remove 3 4 --delete-file
              haul remove --all
            """)

    @OptionGroup var selection: Selection

    @Flag(help: "Also delete the completed file.")
    var deleteFile = false

    @OptionGroup var state: StateOptions

    func run() async throws {
        let manager = try await state.openEditor()
        let ids = try await selection.resolve(in: manager)
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
