import ArgumentParser
import HaulKit

/// `haul`: resumable, crash-safe downloads from the command line.
@main
struct Haul: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haul",
        abstract: "A resumable, crash-safe HTTP(S) download manager.",
        discussion: """
            Downloads survive Ctrl-C, dropped connections and killed processes: run the same command again and \
            it continues where it stopped, checking that the remote file did not change.
            """,
        version: HaulVersion.current,
        subcommands: [Get.self]
    )
}
