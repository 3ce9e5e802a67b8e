import ArgumentParser
import Foundation
import HaulKit

/// Where `haul` keeps its state database; shared by every command.
struct StateOptions: ParsableArguments {
    @Option(
        name: .customLong("state-dir"),
        help: ArgumentHelp(
            "Directory of the state database (default: $HAUL_STATE_DIR, else $XDG_DATA_HOME/haul, else ~/.local/share/haul).",
            valueName: "DIR"))
    var stateDirectory: String?

    /// The state database to use.
    var databaseURL: URL {
        if let stateDirectory { return URL(fileURLWithPath: stateDirectory).appendingPathComponent("haul.sqlite") }
        if let fromEnvironment = ProcessInfo.processInfo.environment["HAUL_STATE_DIR"], !fromEnvironment.isEmpty {
            return URL(fileURLWithPath: fromEnvironment).appendingPathComponent("haul.sqlite")
        }
        return DownloadManager.Configuration.defaultDatabaseURL
    }

    /// A manager that reads and edits the queue but runs nothing (the process running downloads picks up changes).
    func openEditor() async throws -> DownloadManager {
        var configuration = DownloadManager.Configuration(databaseURL: databaseURL)
        configuration.runsDownloads = false
        configuration.resumesStoredDownloads = false
        do {
            return try await DownloadManager(configuration: configuration)
        } catch {
            Console.error(error.description)
            throw ExitStatus.fileSystem
        }
    }
}

extension DownloadID: ExpressibleByArgument {
    /// `3` or `#3`.
    public init?(argument: String) {
        let digits = argument.hasPrefix("#") ? argument.dropFirst() : Substring(argument)
        guard let value = Int64(digits), value > 0 else { return nil }
        self.init(rawValue: value)
    }
}
