import ArgumentParser
import Foundation
import HaulKit

/// `haul get`: download in the foreground; run it again to resume.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download URLs in the foreground and exit when all are done.",
        discussion: """
            Running the same command again resumes where it stopped, after Ctrl-C, a lost connection or a crash. \
            A file that is already complete is not fetched again.

            Examples:
              haul get https://example.com/big.iso
              haul https://example.com/big.iso             # the same: 'get' is implied
              haul get -o debian.iso --checksum sha256=9f86d0… https://example.com/d.iso
              haul get -d downloads -j 8 -i urls.txt
              haul get -x 8 --limit-rate 2M -H 'Authorization: Bearer TOKEN' \\
                  https://example.com/private.tar
              haul get --json https://example.com/a.zip | jq 'select(.type == "completed")'
              haul get -o - https://example.com/src.tar.gz | tar xz
            """)

    @Flag(help: "Check that each URL answers (size, resumable, name) and download nothing, as wget's --spider.")
    var spider = false

    @Flag(
        name: [.customShort("c"), .customLong("continue")],
        help: "Continue a partial download: accepted as wget's -c, changes nothing (Haul always continues).")
    var continues = false

    @OptionGroup var request: RequestOptions
    @OptionGroup var transfer: TransferOptions
    @OptionGroup var state: StateOptions

    /// `-o -`: the file goes to standard output.
    var streamsToStandardOutput: Bool { request.output == "-" }

    func validate() throws {
        if !request.metalinkArguments.isEmpty, streamsToStandardOutput || spider {
            throw ValidationError("a Metalink's files are saved to files: -o - and --spider do not apply")
        }
        guard streamsToStandardOutput, !spider else { return }
        let reason = "-o - writes the file to standard output over one connection"
        if transfer.json { throw ValidationError("\(reason): --json cannot share it") }
        if !request.mirrors.isEmpty { throw ValidationError("\(reason): --mirror does not apply") }
        if request.directory != nil { throw ValidationError("\(reason): -d/--dir does not apply") }
        if request.noClobber || request.overwrite || request.timestamping {
            throw ValidationError("\(reason): there is no file for --no-clobber, --overwrite or -N")
        }
    }

    func run() async throws {
        // Asked first: a password prompt comes before any output.
        let options = try request.downloadOptions()
        let additions = try request.additions(options)
        var configuration = transfer.configuration(state: state, retryMaxTime: 90, spaceWait: 600)
        // Only the URLs named here: other queued downloads wait for `haul run`. What it adds is its own: left
        // unfinished, it is interrupted, and nothing runs it until this command runs again or `haul resume`.
        configuration.resumesStoredDownloads = false
        configuration.ownsItsDownloads = true
        configuration.ownerLabel = "haul get"
        // The finished downloads of earlier commands are read only when one of them is asked for again.
        configuration.keepsHistoryInMemory = false
        // A wrong URL or a server that is not running fails in seconds, as with curl and wget.
        if !transfer.pace.retryConnectionRefused { configuration.retry.firstContactAttempts = 3 }
        // Only a session delivers events: a check or a stream to standard output keeps no outbox.
        var unreported = configuration
        unreported.eventTargets = []
        if spider {
            let configuration = unreported
            let manager = try await ForegroundSession.openManager(configuration)
            let failures = await Spider.run(additions, manager: manager, json: transfer.json)
            await manager.shutdown()
            transfer.login.save(configuration)
            throw ExitStatus.forFailures(failures)
        }
        if streamsToStandardOutput, let (url, _, options) = additions.first {
            let configuration = unreported
            let manager = try await ForegroundSession.openManager(configuration)
            let stream = StandardOutputStream(
                url: url, options: options, quiet: transfer.quiet, logging: transfer.log.level != nil)
            defer { transfer.login.save(configuration) }
            try await stream.run(manager)
        }
        let session = try await ForegroundSession.open(
            configuration, mode: transfer.mode, followsNewDownloads: false,
            resumeHint: "run the same command again", events: transfer.events.settings,
            eventLogger: transfer.eventLogger, onShutdown: { [transfer] in transfer.login.save(configuration) })
        let manager = session.manager

        let ids: [DownloadID]
        do {
            let metalinked = try await request.metalinkAdditions(options, manager: manager)
            // A URL given twice is one download: shown and counted once.
            var seen: Set<DownloadID> = []
            ids = try await manager.add(contentsOf: additions + metalinked).filter { seen.insert($0).inserted }
        } catch {
            // A Metalink fetched now that cannot be used is the command's failure, as a refused download is.
            let failure = (error as? DownloadError) ?? DownloadError.invalidRequest("\(error)")
            Console.error(failure.description)
            try await session.finish(adding: [failure])
        }
        await session.show(ids)
        await manager.waitUntilEnded(ids)
        try await session.finish()
    }
}
