import ArgumentParser
import HaulKit

/// `haul`: resumable, crash-safe downloads from the command line.
@main
struct Haul: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haul",
        abstract: "A resumable, crash-safe HTTP(S) download manager.",
        usage: """
            haul <subcommand>
            haul <url> ... [<options>]    (the same as 'haul get <url> ...')
            """,
        discussion: """
            Downloads survive Ctrl-C, dropped connections and killed processes: run the same command again and \
            it continues where it stopped, checking that the remote file did not change.

            Examples:
              haul get https://example.com/big.iso     # download now; again to resume
              haul https://example.com/big.iso         # the same: 'get' is implied
              haul add -i urls.txt && haul run -j 8    # queue, then work through it
              haul list                                # every download and its state

            Default options: $XDG_CONFIG_HOME/haul/config (or ~/.config/haul/config, or $HAUL_CONFIG), one long \
            option a line ('connections = 8', 'insecure'); the command line wins.

            Progress and messages go to standard error; data (lists, --json, -o -) to standard output.

            State lives in $HAUL_STATE_DIR (or --state-dir).

            Exit statuses: 0 done, 1 a download failed otherwise, 3 checksum mismatch, 4 disk or file-system \
            error, 5 TLS, 6 network (DNS, refused, timed out), 8 HTTP error (404, 5xx), 64 usage error, \
            69 'haul serve' cannot listen (port in use, not allowed), 130 interrupted. With --json, each error \
            has its stable code, its name and the exit status it alone would give (docs/errors.md lists them all).
            """,
        version: BuildInfo.current.line,
        subcommands: [
            Get.self, Add.self, Run.self, List.self, Info.self, Pause.self, Resume.self, Remove.self, Verify.self,
            Repair.self, Serve.self, Hosts.self,
            Version.self,
        ]
    )

    /// Runs the command line with the config file's defaults for its subcommand (see ``ConfigFile``).
    static func main() async {
        // Habits first (`haul URL` is `haul get URL`), so the config file's options for `get` apply to it too.
        let given = CommandLineHabits.arguments(Array(CommandLine.arguments.dropFirst()))
        do {
            await main(try ConfigFile.arguments(given))
        } catch {
            exit(withError: error)
        }
    }
}
