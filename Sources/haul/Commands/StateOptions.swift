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
}
