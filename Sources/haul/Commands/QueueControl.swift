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
        if all { return await manager.snapshots(in: states).map(\.id) }
        for id in ids where await manager.snapshot(id) == nil {
            Console.error(DownloadError.unknownDownload(id).description)
            await manager.shutdown()
            throw ExitStatus.usage
        }
        return ids
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
        let manager = try await state.openEditor()
        for id in try await selection.resolve(in: manager, states: [.queued, .running]) {
            do {
                try await manager.pause(id)
                Console.out("#\(id) \(await manager.snapshot(id)?.state.rawValue ?? "paused")\n")
            } catch {
                Console.error(error.description)
            }
        }
        await manager.shutdown()
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
        let manager = try await state.openEditor()
        for id in try await selection.resolve(in: manager, states: [.paused, .failed]) {
            do {
                try await manager.resume(id)
                Console.out("#\(id) \(await manager.snapshot(id)?.state.rawValue ?? "queued")\n")
            } catch {
                Console.error(error.description)
            }
        }
        await manager.shutdown()
    }
}

/// `haul remove`: forget downloads, deleting partial data.
struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Forget downloads and delete their partial data; completed files stay unless --delete-file.",
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
        var failed: [DownloadError] = []
        for id in try await selection.resolve(in: manager) {
            do {
                try await manager.remove(id, deletingFile: deleteFile)
                Console.out("#\(id) removed\n")
            } catch {
                Console.error(error.description)
                failed.append(error)
            }
        }
        await manager.shutdown()
        if !failed.isEmpty { throw ExitStatus.forFailures(failed) }
    }
}
